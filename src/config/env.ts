/**
 * What Portcullis reads from the environment, in one place (spec §5.2, DESIGN §5). Explicit options
 * always win over these.
 */
import { InvalidConfigurationError } from '../errors.js'

type Env = Readonly<Record<string, string | undefined>>

/**
 * Secrets from the environment, newest first: `AUTH_SECRET_3`, `_2`, `_1`, then `AUTH_SECRET`
 * (else `LEGACYAUTH_SECRET`). The first seals new cookies; all of them are accepted on read.
 * Auth.js orders them the same way, so both libraries agree on which secret is current.
 */
export function secretsFromEnv(env: Env): string[] {
  const secrets: string[] = []
  const base = env.AUTH_SECRET || env.LEGACYAUTH_SECRET
  if (base) secrets.push(base)
  for (const i of [1, 2, 3]) {
    const secret = env[`AUTH_SECRET_${i}`]
    if (secret) secrets.unshift(secret)
  }
  return secrets
}

/** `AUTH_URL`, else `LEGACYAUTH_URL`, parsed; a malformed value is a configuration error. */
export function urlFromEnv(env: Env): URL | undefined {
  const value = env.AUTH_URL || env.LEGACYAUTH_URL
  if (!value) return undefined
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('not http(s)')
    return url
  } catch {
    throw new InvalidConfigurationError(`AUTH_URL must be an absolute http(s) URL such as https://example.com/api/auth; got "${value}".`)
  }
}

/**
 * `AUTH_TRUST_HOST`: `true`/`1` and `false`/`0` (any case). Unlike Auth.js, which reads any
 * non-empty value (even "false") as true, "false" here means false, and anything else is an error.
 */
export function trustHostFromEnv(env: Env): boolean | undefined {
  const value = env.AUTH_TRUST_HOST?.trim().toLowerCase()
  if (value === undefined || value === '') return undefined
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new InvalidConfigurationError(`AUTH_TRUST_HOST must be "true" or "false"; got "${env.AUTH_TRUST_HOST}".`)
}

/** `AUTH_REDIRECT_PROXY_URL`. */
export function redirectProxyUrlFromEnv(env: Env): string | undefined {
  return env.AUTH_REDIRECT_PROXY_URL || undefined
}

/** `AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS`: origins or `https://*.domain` patterns, comma- or space-separated. */
export function redirectProxyAllowedOriginsFromEnv(env: Env): string[] | undefined {
  const value = env.AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS?.trim()
  return value ? value.split(/[\s,]+/).filter(Boolean) : undefined
}

/** True under `NODE_ENV=production`. */
export function isProduction(env: Env): boolean {
  return env.NODE_ENV === 'production'
}

/**
 * Resolves the caller's configuration once, at init, into a frozen object: defaults applied,
 * environment read, values validated with errors that say what to change, session keys derived.
 * Nothing here runs per request, and the caller's object is never modified.
 *
 * @see spec/auth-library-spec.md §2.1, §2.2, §5.2
 */
import { randomBytes } from 'node:crypto'
import { deepFreeze } from '../freeze.js'
import { assertSessionAdapter, guardAdapter } from './adapter.js'
import { resolvePrune } from './prune.js'
import { InvalidConfigurationError, MissingAuthorizeError, MissingSecretError, UntrustedHostError } from '../errors.js'
import { createLogger, type LoggerInstance } from '../logger.js'
import { requestLogFields } from '../http/log-fields.js'
import { defaultRedirect, parseOriginPattern, type OriginPattern } from '../security/redirect.js'
import { resolveRateLimit } from '../security/rate-limit-config.js'
import { COOKIE_CHUNK_SIZE, MAX_COOKIE_CHUNKS, resolveCookies } from '../session/cookies.js'
import { deriveKeyRing } from '../session/keys.js'
import { resolveSessionStore, sharedStoreOf } from '../session/store/resolve.js'
import { resolveOAuthProvider } from './oauth-provider.js'
import { assertPasskeyAdapter, resolvePasskeyProvider } from './passkey-provider.js'
import { assertPasswordAdapter, isPasswordProvider, resolvePasswordProvider } from './password-provider.js'
import { resolveTwoFactor } from './two-factor.js'
import { resolveTelemetry } from './telemetry.js'
import { EMAIL_ADAPTER_METHODS, resolveEmailProvider } from '../email/config.js'
import type { Adapter, CallbacksOptions, CookiesOptions, PagesOptions } from '../types.js'
import type { EmailProvider } from '../providers/email.js'
import type { PasswordConfig } from '../providers/password.js'
import type { ConfiguredProvider, CookieSet, PortcullisConfig, ResolvedConfig } from './types.js'
import { isProduction, redirectProxyAllowedOriginsFromEnv, redirectProxyUrlFromEnv, secretsFromEnv, trustHostFromEnv, urlFromEnv } from './env.js'

const THIRTY_DAYS = 30 * 24 * 60 * 60
const ONE_DAY = 24 * 60 * 60

/**
 * Resolves `config` against `env`.
 *
 * @throws MissingSecretError in production without a secret.
 * @throws InvalidConfigurationError / UntrustedHostError when an option cannot work.
 */
export function resolveConfig(config: PortcullisConfig, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedConfig {
  if (config === null || typeof config !== 'object') throw new TypeError('Portcullis(config): config must be an object.')
  const logger = createLogger(config.logger, config.debug === true, requestLogFields)

  const redirectProxyUrl = config.redirectProxyUrl ?? redirectProxyUrlFromEnv(env)
  const url = urlFromEnv(env)
  const providers = resolveProviders(config.providers, env, redirectProxyUrl, url)
  if (providers.length === 0) {
    // An API behind another app's sign-in (say a Next.js front end on Auth.js) only reads its sessions.
    logger.warn('SessionsOnly', 'providers is empty: this instance only reads sessions; nobody can sign in through it. Add a provider to offer sign-in.')
  }
  const secrets = resolveSecrets(config.secret, env, logger)
  const trustHost = config.trustHost ?? trustHostFromEnv(env)
  if (trustHost === false && !url) {
    throw new UntrustedHostError(
      'trustHost is false (or AUTH_TRUST_HOST=false), so the request Host is not trusted and AUTH_URL must give the site URL, e.g. AUTH_URL=https://example.com/api/auth.',
    )
  }
  const adapter = config.adapter === undefined ? undefined : guardAdapter(config.adapter, logger)
  const session = resolveSession(config, adapter, logger)
  if (session.strategy === 'database' && typeof adapter?.getUser !== 'function' && providers.some((provider) => provider.type === 'credentials')) {
    // Credentials sign-in finds the session's user row by the id `authorize` returned.
    throw new InvalidConfigurationError('Credentials sign-in with database sessions needs an adapter with getUser(); add it, or use session.strategy "jwt".')
  }
  if (adapter && providers.some((provider) => provider.type === 'oauth' || provider.type === 'oidc')) assertAccountAdapter(adapter)
  const emailProvider = providers.find((provider) => provider.type === 'email')
  if (emailProvider) assertEmailSignIn(emailProvider.id, adapter, url, trustHost, isProduction(env))
  const passwordProvider = providers.find(isPasswordProvider)
  if (passwordProvider) assertPasswordSignIn(passwordProvider.id, adapter, session, url, trustHost, isProduction(env))
  for (const provider of providers) if (provider.type === 'webauthn') assertPasskeyAdapter(provider.id, adapter)
  const basePath = resolveBasePath(config.basePath, url)
  const useSecureCookies = config.useSecureCookies
  const jwtMaxAge = config.jwt?.maxAge ?? session.maxAge
  assertSeconds('jwt.maxAge', jwtMaxAge)
  // 3 chunks (~12 KB) fit the 16 KB of request headers Node reads by default, with room to spare.
  const jwtCacheSize = config.jwt?.cacheSize ?? 1000
  if (!Number.isSafeInteger(jwtCacheSize) || jwtCacheSize < 0) {
    throw new InvalidConfigurationError(`jwt.cacheSize must be a whole number of tokens, 0 to turn the cache off; got ${String(jwtCacheSize)}.`)
  }
  const jwtMaxSize = config.jwt?.maxSize ?? 3 * COOKIE_CHUNK_SIZE
  if (!Number.isInteger(jwtMaxSize) || jwtMaxSize < 1 || jwtMaxSize > MAX_COOKIE_CHUNKS * COOKIE_CHUNK_SIZE) {
    throw new InvalidConfigurationError(
      `jwt.maxSize must be a whole number of bytes from 1 to ${MAX_COOKIE_CHUNKS * COOKIE_CHUNK_SIZE} (${MAX_COOKIE_CHUNKS} cookie chunks of ${COOKIE_CHUNK_SIZE}, the most read back); got ${String(jwtMaxSize)}.`,
    )
  }

  const rateLimit = resolveRateLimit(config.rateLimit)

  return deepFreeze({
    providers,
    providerById: new Map(providers.map((provider) => [provider.id, provider])),
    secrets,
    session,
    sharedStore: session.strategy === 'jwt' ? sharedStoreOf(session.store, typeof config.rateLimit === 'object' ? config.rateLimit.store : undefined, logger) : undefined,
    adapter,
    jwt: { maxAge: jwtMaxAge, maxSize: jwtMaxSize, cacheSize: jwtCacheSize, encode: config.jwt?.encode, decode: config.jwt?.decode },
    callbacks: { ...config.callbacks, redirect: config.callbacks?.redirect ?? defaultRedirect },
    events: { ...config.events },
    logger,
    pages: resolvePages(config.pages),
    theme: { colorScheme: 'auto', ...config.theme },
    basePath: basePath.value,
    basePathExplicit: basePath.explicit,
    url,
    trustHost,
    production: isProduction(env),
    useSecureCookies,
    cookieSets: {
      secure: cookieSet(true, config.cookies, secrets),
      insecure: cookieSet(false, config.cookies, secrets),
    },
    redirectProxyUrl,
    redirectProxyAllowedOrigins: resolveAllowedOrigins(config.redirectProxy?.allowedOrigins ?? redirectProxyAllowedOriginsFromEnv(env)),
    rateLimit,
    prune: resolvePrune(config.prune, adapter, rateLimit),
    twoFactor: resolveTwoFactor(config.twoFactor, adapter, rateLimit),
    telemetry: resolveTelemetry(config.telemetry),
  } satisfies ResolvedConfig)
}

function resolveProviders(
  input: PortcullisConfig['providers'],
  env: Readonly<Record<string, string | undefined>>,
  redirectProxyUrl: string | undefined,
  url: URL | undefined,
): ConfiguredProvider[] {
  // Forgotten providers fail at init, not with a 400 on the first sign-in; an explicit `[]` reads sessions only.
  if (input === undefined) throw new InvalidConfigurationError(`providers is missing: ${AT_LEAST_ONE_PROVIDER}`)
  if (!Array.isArray(input)) throw new TypeError('Portcullis(config): providers must be an array.')
  const resolved = input.map((entry, index): ConfiguredProvider | PasswordConfig => {
    // A built-in provider may be given bare (`providers: [GitHub]`): call it with no overrides.
    const provider = typeof entry === 'function' ? entry() : entry
    if (!provider || typeof provider !== 'object') {
      throw new InvalidConfigurationError(`providers[${index}] is not a provider: expected an object such as Credentials({ authorize }) or GitHub; got ${provider === null ? 'null' : typeof provider}.`)
    }
    if (typeof provider.id !== 'string' || !provider.id) {
      throw new InvalidConfigurationError(`providers[${index}] has no id: give it a non-empty string id such as "credentials" or "github" (it names the provider in its URLs).`)
    }
    if (!/^[A-Za-z0-9_-]+$/.test(provider.id)) {
      throw new InvalidConfigurationError(`Provider id "${provider.id}" may only contain letters, digits, "-" and "_": it is part of URLs.`)
    }
    switch (provider.type) {
      case 'credentials':
        // Resolved below, once the Nodemailer provider whose server it may share is.
        if (isPasswordProvider(provider)) return provider
        if (typeof provider.authorize !== 'function') throw new MissingAuthorizeError(provider.id)
        // A shallow copy, frozen: the caller's provider object stays as it was given.
        return Object.freeze({ ...provider })
      case 'oauth':
      case 'oidc':
        return resolveOAuthProvider(provider, env, redirectProxyUrl)
      case 'email':
        return resolveEmailProvider(provider, env, isProduction(env))
      case 'webauthn':
        return resolvePasskeyProvider(provider, url)
      default: {
        const { type } = provider as { type?: unknown }
        throw new InvalidConfigurationError(
          `Provider "${(provider as { id: string }).id}": type must be "oauth", "oidc", "email", "credentials" or "webauthn"; got ${JSON.stringify(type)}.`,
        )
      }
    }
  })
  const nodemailer = resolved.find((provider): provider is EmailProvider => provider.type === 'email' && 'server' in provider)
  const providers = resolved.map((provider) =>
    isPasswordProvider(provider) ? resolvePasswordProvider(provider as PasswordConfig, env, isProduction(env), nodemailer as { server?: unknown; from?: unknown } | undefined) : provider,
  )
  if (providers.filter(isPasswordProvider).length > 1) throw new InvalidConfigurationError('Two password providers are configured: one is enough (its routes, /signup and /forgot-password, are shared).')
  const seen = new Set<string>()
  for (const { id } of providers) {
    if (seen.has(id)) throw new InvalidConfigurationError(`Two providers have the id "${id}": give one of them another id.`)
    seen.add(id)
  }
  return providers
}

function resolveSecrets(secret: PortcullisConfig['secret'], env: Readonly<Record<string, string | undefined>>, logger: LoggerInstance): string[] {
  const given = secret === undefined ? [] : Array.isArray(secret) ? [...secret] : [secret]
  if (given.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new InvalidConfigurationError('secret must be a non-empty string or a list of non-empty strings (newest first).')
  }
  const secrets = given.length > 0 ? given : secretsFromEnv(env)
  if (secrets.length > 0) return secrets
  if (isProduction(env)) throw new MissingSecretError()
  logger.warn(
    'MissingSecret',
    'No AUTH_SECRET set: using a random secret for this process, so sessions end when it restarts. Set AUTH_SECRET (`openssl rand -base64 33`) before deploying.',
  )
  return [randomBytes(32).toString('base64url')]
}

function resolveSession(config: PortcullisConfig, adapter: Adapter | undefined, logger: LoggerInstance): ResolvedConfig['session'] {
  const options = config.session ?? {}
  // Spec §2.2: an adapter makes `database` the default; an explicit `jwt` keeps JWT sessions.
  const strategy = options.strategy ?? (adapter ? 'database' : 'jwt')
  if (strategy !== 'jwt' && strategy !== 'database') {
    throw new InvalidConfigurationError(`session.strategy must be "jwt" or "database"; got "${String(strategy)}".`)
  }
  if (strategy === 'database') {
    if (!adapter) {
      throw new InvalidConfigurationError(
        'session.strategy "database" needs a database adapter: pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex", or use "jwt".',
      )
    }
    assertSessionAdapter(adapter)
  }
  const maxAge = options.maxAge ?? THIRTY_DAYS
  const updateAge = options.updateAge ?? ONE_DAY
  assertSeconds('session.maxAge', maxAge)
  assertSeconds('session.updateAge', updateAge)
  const generateSessionToken = options.generateSessionToken ?? defaultSessionToken
  if (typeof generateSessionToken !== 'function') throw new InvalidConfigurationError('session.generateSessionToken must be a function returning a string.')
  const revocationCacheSeconds = options.revocationCacheSeconds ?? 5
  const storeOutageSeconds = options.storeOutageSeconds ?? 300
  assertSeconds('session.revocationCacheSeconds', revocationCacheSeconds)
  assertSeconds('session.storeOutageSeconds', storeOutageSeconds)
  const store = resolveSessionStore(options.store, logger)
  if (store && strategy === 'database') {
    logger.warn('SessionStoreUnused', 'session.store is for JWT sessions: database sessions are listed and ended in the database, and their refresh lease is kept in the Account row. It is not used.')
  }
  return { strategy, maxAge, updateAge, generateSessionToken, store, revocationCacheMs: revocationCacheSeconds * 1000, storeOutageMs: storeOutageSeconds * 1000 }
}

// 256 bits from the CSPRNG: a session token cannot be guessed, and hex fits any column and cookie.
function defaultSessionToken(): string {
  return randomBytes(32).toString('hex')
}

function resolveBasePath(basePath: string | undefined, url: URL | undefined): { value: string; explicit: boolean } {
  if (basePath !== undefined) {
    if (typeof basePath !== 'string' || !basePath.startsWith('/')) throw new InvalidConfigurationError(`basePath must start with "/"; got "${String(basePath)}".`)
    return { value: trimSlash(basePath), explicit: true }
  }
  if (url && url.pathname !== '/') return { value: trimSlash(url.pathname), explicit: true }
  return { value: '/api/auth', explicit: false }
}

function resolvePages(pages: PagesOptions | undefined): PagesOptions {
  const resolved: PagesOptions = { ...pages }
  for (const [key, path] of Object.entries(resolved)) {
    if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//'))) {
      throw new InvalidConfigurationError(`pages.${key} must be a path on this site such as "/login"; got "${String(path)}".`)
    }
  }
  return resolved
}

function cookieSet(secure: boolean, overrides: Partial<CookiesOptions> | undefined, secrets: readonly string[]): CookieSet {
  const cookies = resolveCookies(secure, overrides)
  return { secure, cookies, ring: deriveKeyRing(secrets, cookies.sessionToken.name) }
}

function assertSeconds(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidConfigurationError(`${name} must be a number of seconds (>= 0); got ${String(value)}.`)
  }
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') : path
}

// Freezes plain objects and arrays only: key material, URLs and Maps keep their own invariants.

/** OAuth sign-in with an adapter stores users and accounts. @throws InvalidConfigurationError naming the missing methods */
function assertAccountAdapter(adapter: Adapter): void {
  const missing = ACCOUNT_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`OAuth and OIDC sign-in with an adapter need its ${missing.join(', ')}; this adapter lacks them.`)
  }
}

const ACCOUNT_METHODS = ['getUser', 'getUserByAccount', 'getUserByEmail', 'createUser', 'linkAccount'] as const

/**
 * E-mail sign-in stores its tokens and users through the adapter, and mails links whose origin
 * must not come from a Host header a client chose (Host-header poisoning would mail links to the
 * attacker's site). In production that takes AUTH_URL or trustHost: true; in development, without
 * them, links are made for loopback origins only (the router refuses others).
 * @throws InvalidConfigurationError, UntrustedHostError
 */
function assertEmailSignIn(providerId: string, adapter: Adapter | undefined, url: URL | undefined, trustHost: boolean | undefined, production: boolean): void {
  if (!adapter) {
    throw new InvalidConfigurationError(
      `E-mail sign-in (provider "${providerId}") needs an adapter: its one-time tokens are stored in the database. Pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex".`,
    )
  }
  const missing = EMAIL_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`E-mail sign-in (provider "${providerId}") needs the adapter's ${missing.join(', ')}; this adapter lacks them.`)
  assertMailedLinks(`E-mail sign-in (provider "${providerId}")`, url, trustHost, production)
}

/**
 * The password provider's needs: an adapter with its methods, a site URL for its links, and a way to
 * end a user's sessions (a reset ends them all, a change the others).
 */
function assertPasswordSignIn(providerId: string, adapter: Adapter | undefined, session: ResolvedConfig['session'], url: URL | undefined, trustHost: boolean | undefined, production: boolean): void {
  assertPasswordAdapter(providerId, adapter)
  assertMailedLinks(`The password provider "${providerId}"`, url, trustHost, production)
  if (session.strategy === 'jwt' && !session.store) {
    throw new InvalidConfigurationError(
      `The password provider "${providerId}" ends a user's sessions when their password is reset or changed, which JWT sessions can only do with session.store ('memory', { redis }, { knex }): set it, or use database sessions (the default with an adapter).`,
    )
  }
  if (session.strategy === 'database' && typeof adapter?.deleteSessionsByUserId !== 'function') {
    throw new InvalidConfigurationError(`The password provider "${providerId}" ends a user's sessions when their password is reset or changed: the adapter needs deleteSessionsByUserId (KnexAdapter has it).`)
  }
}

/** A provider that mails links needs a site URL that no request can choose, in production. */
function assertMailedLinks(what: string, url: URL | undefined, trustHost: boolean | undefined, production: boolean): void {
  if (production && !url && trustHost !== true) {
    throw new UntrustedHostError(
      `${what} mails links to your site, so the site's URL must not come from the request's Host header, which any client can set (it would mail links to their site). Set AUTH_URL (e.g. AUTH_URL=https://example.com/api/auth), or trustHost: true (AUTH_TRUST_HOST=true) when a proxy you run sets the Host.`,
    )
  }
}

function resolveAllowedOrigins(input: unknown): OriginPattern[] {
  if (input === undefined) return []
  if (!Array.isArray(input)) throw new TypeError('Portcullis(config): redirectProxy.allowedOrigins must be an array of origins.')
  return input.map((value) => {
    const pattern = typeof value === 'string' ? parseOriginPattern(value) : undefined
    if (!pattern) {
      throw new InvalidConfigurationError(`redirectProxy.allowedOrigins: "${String(value)}" is not an origin; write one like https://staging.example.com or https://*.preview.example (no path).`)
    }
    return Object.freeze(pattern)
  })
}

const AT_LEAST_ONE_PROVIDER = 'configure at least one provider, e.g. providers: [Credentials({ authorize })] or providers: [GitHub] (or providers: [] for an API that only reads sessions).'

/**
 * `portcullis/jwt`: encode, decode and read Auth.js v5 session JWTs outside the request handlers,
 * with the same signatures as `@auth/core/jwt`. Tokens are interchangeable both ways.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7519 JSON Web Token
 * @see https://www.rfc-editor.org/rfc/rfc7516 JSON Web Encryption
 */
import { parseCookie } from 'cookie'
import { secretsFromEnv } from './config/env.js'
import { JWTSessionError, MissingSecretError } from './errors.js'
import { readChunkedCookie } from './session/cookies.js'
import { deriveKeyRing, type KeyRing } from './session/keys.js'
import { nowInSeconds, openSessionToken, sealSessionToken } from './session/token.js'
import type { JWT, JWTDecodeParams, JWTEncodeParams } from './types.js'

export { JWTSessionError }

/** Auth.js's default session lifetime: 30 days, in seconds. */
const DEFAULT_MAX_AGE = 30 * 24 * 60 * 60
const SESSION_COOKIE = 'authjs.session-token'
const SECURE_PREFIX = '__Secure-'

/**
 * Issues a session JWT (JWE, `dir` + A256CBC-HS512) that Auth.js v5 can read.
 *
 * @param params `token` (claims, default `{}`), `secret` (a list seals with its first entry),
 *   `salt` (the session cookie name) and `maxAge` (seconds, default 30 days).
 * @example
 * ```ts
 * import { encode } from 'portcullis/jwt'
 * const jwt = await encode({ token: { sub: '42' }, secret: 'a-long-random-secret', salt: 'authjs.session-token' })
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7.1
 */
export async function encode(params: JWTEncodeParams): Promise<string> {
  const { token = {}, secret, salt, maxAge = DEFAULT_MAX_AGE } = params
  return sealSessionToken(token, keyRing(toSecretList(secret), salt).current, maxAge, nowInSeconds())
}

/**
 * Decodes a session JWT issued by Portcullis or Auth.js v5, trying each secret of a list.
 *
 * @param params `token`, `secret` (one or a list, for rotation) and `salt` (the session cookie name).
 * @returns The claims, or `null` when `token` is empty.
 * @throws JWTSessionError (as a rejection) when the token is invalid or expired.
 * @example
 * ```ts
 * import { decode, encode } from 'portcullis/jwt'
 * const params = { secret: 'a-long-random-secret', salt: 'authjs.session-token' }
 * const payload = await decode({ ...params, token: await encode({ ...params, token: { sub: '42' } }) })
 * payload?.sub // '42'
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7.2
 */
export async function decode(params: JWTDecodeParams): Promise<JWT | null> {
  const { token, secret, salt } = params
  if (!token) return null
  const opened = openSessionToken(token, keyRing(toSecretList(secret), salt), nowInSeconds())
  if (opened === null) throw new JWTSessionError('The session token is invalid or expired')
  return opened.payload
}

/**
 * What `getToken` reads: any request with headers (Express, node:http, or a Fetch `Request`).
 * @see https://www.rfc-editor.org/rfc/rfc6265#section-5.4
 */
export interface GetTokenParams {
  req: { headers: Record<string, string | string[] | undefined> | Headers }
  /** Default: `AUTH_SECRET_3`, `_2`, `_1`, then `AUTH_SECRET` (or `LEGACYAUTH_SECRET`) from the environment. */
  secret?: string | readonly string[] | undefined
  /** Read the `__Secure-` cookie. Default `false`. */
  secureCookie?: boolean | undefined
  /** Default `authjs.session-token`, with the `__Secure-` prefix when `secureCookie`. */
  cookieName?: string | undefined
  /** Default: the cookie name. */
  salt?: string | undefined
  /** Return the token string without decoding it. */
  raw?: boolean | undefined
}

/**
 * Reads the session JWT of a request: the session cookie (joining chunks `name.0`, `name.1`, …),
 * else an `Authorization: Bearer` token, then decodes it.
 *
 * @returns The claims (or with `raw` the token string), or `null` when there is no token or it
 *   cannot be decoded.
 * @throws MissingSecretError when there is a token to decode and no secret is given nor set in the
 *   environment (as in Auth.js: no token gives `null`, and `raw` needs no secret).
 * @example
 * ```ts
 * import { encode, getToken } from 'portcullis/jwt'
 * const secret = 'a-long-random-secret'
 * const jwt = await encode({ token: { sub: '42' }, secret, salt: 'authjs.session-token' })
 * const req = { headers: { cookie: `authjs.session-token=${jwt}` } } // or Express's `req`
 * ;(await getToken({ req, secret }))?.sub // '42'
 * await getToken({ req, secret, raw: true }) // the cookie value itself
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6265#section-5.4 (Cookie header)
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1 (Bearer)
 */
export async function getToken(params: GetTokenParams & { raw: true }): Promise<string | null>
export async function getToken(params: GetTokenParams & { raw?: false | undefined }): Promise<JWT | null>
export async function getToken(params: GetTokenParams): Promise<JWT | string | null>
export async function getToken(params: GetTokenParams): Promise<JWT | string | null> {
  const { req, secureCookie = false, raw = false } = params
  if (req === null || typeof req !== 'object' || req.headers == null) {
    throw new TypeError('getToken: pass the request as `req`')
  }
  const cookieName = params.cookieName ?? (secureCookie ? SECURE_PREFIX : '') + SESSION_COOKIE
  const token = readSessionCookie(req.headers, cookieName) ?? readBearer(req.headers)
  if (token === null) return null
  if (raw) return token
  const secrets = params.secret === undefined || params.secret.length === 0 ? secretsFromEnv(process.env) : toSecretList(params.secret)
  if (secrets.length === 0) throw new MissingSecretError('getToken: pass `secret` or set AUTH_SECRET in the environment.')
  const opened = openSessionToken(token, keyRing(secrets, params.salt ?? cookieName), nowInSeconds())
  return opened === null ? null : opened.payload
}

/** Key rings by (salt, secrets), so that no call after the first derives a key. */
const keyRings = new Map<string, KeyRing>()
/** Secrets and salts come from configuration, so few distinct rings exist; the cap only guards misuse. */
const MAX_KEY_RINGS = 64

function keyRing(secrets: readonly string[], salt: string): KeyRing {
  const cacheKey = JSON.stringify([salt, ...secrets])
  let ring = keyRings.get(cacheKey)
  if (ring === undefined) {
    ring = deriveKeyRing(secrets, salt)
    if (keyRings.size >= MAX_KEY_RINGS) {
      const oldest = keyRings.keys().next()
      if (oldest.done !== true) keyRings.delete(oldest.value)
    }
    keyRings.set(cacheKey, ring)
  }
  return ring
}

function toSecretList(secret: string | readonly string[]): readonly string[] {
  if (typeof secret === 'string') return [secret]
  if (Array.isArray(secret)) return secret
  throw new TypeError('`secret` must be a string or a list of strings')
}

type RequestHeaders = GetTokenParams['req']['headers']

/** A header's value from a Fetch `Headers` or a Node header object, matched case-insensitively. */
function headerValue(headers: RequestHeaders, name: string, separator: string): string | null {
  if (headers instanceof Headers) return headers.get(name)
  let value = headers[name]
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key]
        break
      }
    }
  }
  if (value === undefined) return null
  return typeof value === 'string' ? value : value.join(separator)
}

/** The session cookie's value, joining its chunks `name.0`, `name.1`, … like the router does. */
function readSessionCookie(headers: RequestHeaders, name: string): string | null {
  const header = headerValue(headers, 'cookie', '; ')
  return (header && readChunkedCookie(parseCookie(header), name)) || null
}

/** An `Authorization: Bearer <token>` header's token, percent-decoded as Auth.js does. */
function readBearer(headers: RequestHeaders): string | null {
  const header = headerValue(headers, 'authorization', ', ')
  if (!header) return null
  const [scheme, encoded] = header.split(' ')
  // Auth-scheme names are case-insensitive (RFC 7235 §2.1).
  if (scheme?.toLowerCase() !== 'bearer' || !encoded) return null
  try {
    return decodeURIComponent(encoded)
  } catch {
    return null
  }
}

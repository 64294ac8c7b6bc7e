/**
 * The sessions both sides of the HTTP and memory benches agree on: the apps (bench/http-apps.ts,
 * in the server process) know the secret, the users, the database session tokens and the Passport
 * session ids; the load generator (bench/http.ts) makes the Cookie headers from the same values,
 * so nothing but a port crosses between the processes. Also the auth route a Portcullis server
 * answers before it is measured.
 */
import { createHash, createPrivateKey, sign, randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { betterAuthCookie } from './better-auth.js'
import { deriveKeyRing } from '../src/session/keys.js'
import { sealSessionToken } from '../src/session/token.js'
import { checksum, RANDOM_LENGTH } from '../src/features/api-keys/format.js'
import { signingKeyOf } from '../src/features/authorization-server/keys.js'

export const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
/** Portcullis's and Auth.js's session cookie on http: the same name, so both read the same cookies. */
export const SESSION_COOKIE = 'authjs.session-token'
/** express-session's default cookie name. */
export const PASSPORT_COOKIE = 'connect.sid'
export const MAX_AGE = 30 * 24 * 60 * 60
export const HOST = '127.0.0.1'

export interface BenchUser {
  id: string
  name: string
  email: string
  image: string
}

/** User `i`: the same name, e-mail and avatar sizes as bench/session.ts's tokens. */
export function benchUser(i: number): BenchUser {
  return {
    id: `user-${i}`,
    name: `Ada Lovelace ${i}`,
    email: `ada.lovelace.${i}@analytical-engine.example.com`,
    image: `https://avatars.githubusercontent.com/u/${1_000_000 + i}?v=4`,
  }
}

const ring = deriveKeyRing([SECRET], SESSION_COOKIE)

/**
 * JWT session cookies for users `from` … `from + count - 1`, as Cookie headers: sealed as Portcullis
 * seals them at sign-in (dir + A256CBC-HS512, Auth.js's key derivation), so `@auth/express` reads
 * them too. Issued now, so none is due for re-issue (`updateAge`) during a run.
 */
export function jwtSessionCookies(from: number, count: number): string[] {
  const now = Math.floor(Date.now() / 1000)
  const cookies: string[] = []
  for (let i = from; i < from + count; i++) {
    const user = benchUser(i)
    // A random `sub`, as bench/session.ts: every token is distinct even for the same index.
    const payload = { name: user.name, email: user.email, picture: user.image, sub: randomUUID() }
    cookies.push(`${SESSION_COOKIE}=${sealSessionToken(payload, ring.current, MAX_AGE, now)}`)
  }
  return cookies
}

/**
 * Cookie headers of JWT sessions `from … from + count - 1` whose tokens carry an active organization
 * (the `organization` app) with the `member` role there, as a switch seals it.
 */
export function organizationSessionCookies(from: number, count: number): string[] {
  const now = Math.floor(Date.now() / 1000)
  const cookies: string[] = []
  for (let i = from; i < from + count; i++) {
    const user = benchUser(i)
    const payload = { name: user.name, email: user.email, picture: user.image, sub: randomUUID(), activeOrganization: { id: `organization-${i % 10}`, roles: ['member'] } }
    cookies.push(`${SESSION_COOKIE}=${sealSessionToken(payload, ring.current, MAX_AGE, now)}`)
  }
  return cookies
}

/** The session id (`sid`) of revocable JWT session `i`, recorded in the `jwt-store` app's store. */
export function storeSessionId(i: number): string {
  return `bench-session-${i}`
}

/**
 * Cookie headers for revocable JWT sessions `0 … count - 1` (`session.store`): each token carries its
 * `sid` and the user's id as `sub`, matching the records the `jwt-store` app writes.
 */
export function jwtStoreSessionCookies(count: number): string[] {
  const now = Math.floor(Date.now() / 1000)
  return Array.from({ length: count }, (_, i) => {
    const user = benchUser(i)
    const payload = { name: user.name, email: user.email, picture: user.image, sub: user.id, sid: storeSessionId(i) }
    return `${SESSION_COOKIE}=${sealSessionToken(payload, ring.current, MAX_AGE, now)}`
  })
}

/** The opaque token of database session `i` (64 hex characters, like a random 32-byte token). */
export function databaseSessionToken(i: number): string {
  return createHash('sha256').update(`bench-database-session-${i}`).digest('hex')
}

/** The prefix of the API key rows' keys (the default). */
export const API_KEY_PREFIX = 'pc_live_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** API key `i` of the API key rows, owned by user `i`: well-formed (its checksum matches), the same on every run. */
export function benchApiKey(i: number): string {
  const bytes = createHash('sha512').update(`bench-api-key-${i}`).digest()
  const random = Array.from(bytes.subarray(0, RANDOM_LENGTH), (byte) => BASE62[byte % 62]).join('')
  return `${API_KEY_PREFIX}${random}${checksum(API_KEY_PREFIX + random)}`
}

/** Authorization headers for API keys `0 … count - 1`. */
export function apiKeyHeaders(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `Bearer ${benchApiKey(i)}`)
}

/** express-session's id of Passport session `i` (32 URL-safe characters, like its uid-safe ids). */
export function passportSessionId(i: number): string {
  return createHash('sha256').update(`bench-passport-session-${i}`).digest('base64url').slice(0, 32)
}

// express-session signs its cookie with cookie-signature (untyped); take the copy it loads itself.
const requireFromSession = createRequire(createRequire(import.meta.url).resolve('express-session'))
const cookieSignature = requireFromSession('cookie-signature') as { sign(value: string, secret: string): string }

/** Cookie headers for better-auth's sessions `0 … count - 1` (bench/better-auth.ts), its session token only. */
export function betterAuthCookies(count: number): string[] {
  return Array.from({ length: count }, (_, i) => betterAuthCookie(SECRET, i))
}

/**
 * `cookies` with better-auth's `session_data` cookie beside each session token, as a browser holds them
 * after its client's `GET /api/auth/get-session` on the server at `origin` (a cookie that has one is kept).
 */
export async function withSessionData(origin: string, cookies: readonly string[]): Promise<string[]> {
  const held: string[] = []
  for (const cookie of cookies) {
    if (cookie.includes('better-auth.session_data=')) {
      held.push(cookie)
      continue
    }
    const response = await fetch(`${origin}/api/auth/get-session`, { headers: { cookie } })
    await response.arrayBuffer()
    const data = response.headers.getSetCookie().find((line) => line.startsWith('better-auth.session_data='))
    if (!data) throw new Error(`better-auth's get-session set no session_data cookie (${response.status})`)
    held.push(`${cookie}; ${data.split(';')[0]!}`)
  }
  return held
}

/** Cookie headers for database sessions `0 … count - 1`. */
export function databaseSessionCookies(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${SESSION_COOKIE}=${databaseSessionToken(i)}`)
}

/** Cookie headers for Passport sessions `0 … count - 1`: `s:<id>.<HMAC>`, URL-encoded, as express-session sets it. */
export function passportSessionCookies(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${PASSPORT_COOKIE}=${encodeURIComponent(`s:${cookieSignature.sign(passportSessionId(i), SECRET)}`)}`)
}

/**
 * `GET /api/auth/session` on the Portcullis server at `origin`, answered 200, before the server is timed or
 * counted: a deployed app's server has served its auth routes (browsers poll this one) before the routes
 * the benches measure. On Node 20 and 22 that left the request scope's AsyncLocalStorage enabled for good
 * until src/http/request-scope.ts disabled it between scoped requests, a cost of every later request that
 * the benches, whose servers served no auth route, did not show.
 */
export async function answerAuthRouteFirst(origin: string, cookie: string): Promise<void> {
  const response = await fetch(`${origin}/api/auth/session`, { headers: { cookie } })
  await response.body?.cancel()
  if (response.status !== 200) throw new Error(`${origin}: GET /api/auth/session answered ${response.status}`)
}

/** The bench's site URL when an app issues or reads access tokens: AUTH_URL fixes the issuer, whatever Host a request sends. */
export const BEARER_SITE = 'http://bench.example'
/** The client the bench's access tokens were issued to. */
export const BEARER_CLIENT = 'bench-cli'

/**
 * `Authorization` headers of `count` access tokens as the authorization server issues them (RFC 9068
 * JWTs signed with the key derived from SECRET, for the app's own API, an hour left), token `i` for
 * user `i` under grant `grant-i` (bench/http-apps.ts stores the grants).
 */
export function bearerHeaders(count: number): string[] {
  const key = signingKeyOf(SECRET)
  const privateKey = createPrivateKey({ key: { ...key.jwk }, format: 'jwk' })
  const now = Math.floor(Date.now() / 1000)
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })).toString('base64url')
  return Array.from({ length: count }, (_, i) => {
    const claims = { jti: `bench-token-${i}`, sub: benchUser(i).id, iat: now, exp: now + 3600, scope: 'reports:read', client_id: BEARER_CLIENT, iss: `${BEARER_SITE}/api/auth/oauth`, aud: `${BEARER_SITE}/`, gid: `grant-${i}` }
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')
    return `Bearer ${header}.${payload}.${signature}`
  })
}

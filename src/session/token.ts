/**
 * The session JWT: claims sealed in the session JWE, issued and checked exactly as
 * `@auth/core/jwt` does through jose's `EncryptJWT` and `jwtDecrypt` (clock tolerance 15 s).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7 Creating and validating JWTs
 */
import { randomUUID } from 'node:crypto'
import type { JWT } from '../types.js'
import { decryptJwe, encryptJwe } from './jwe.js'
import type { KeyRing, SessionKey } from './keys.js'

/**
 * Seconds of clock skew allowed on `exp` and `nbf`, as Auth.js passes to jose's `jwtDecrypt`.
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-4.1.4
 */
export const CLOCK_TOLERANCE = 15

/** Now, in seconds since the epoch: the unit of `iat`, `exp` and `nbf`. */
export function nowInSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

/**
 * A session token that decrypted and passed the claim checks.
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7.2
 */
export interface OpenedToken {
  /**
   * The claims. Read them, never change them: from the token cache they are shared between requests
   * (and frozen); `ownClaims` in token-cache.ts gives a copy to change or to hand to app code.
   */
  readonly payload: Readonly<JWT>
  /** The decrypted claims set JSON, as sealed. */
  readonly plaintext: string
  /** True when `payload` is the token cache's, shared between requests. */
  readonly shared?: boolean
  /** The session's `expires` from the claims' `exp`, formatted by the first read that needed it (jwt-strategy.ts). */
  expires?: string
}

/**
 * Seals a session JWT: the payload's claims, then `iat`, `exp` and a fresh `jti`. Like jose's
 * `EncryptJWT`, a claim already in the payload is overwritten in place (it keeps its position in
 * the JSON), so the plaintext is the same bytes Auth.js would seal.
 *
 * @param payload The claims to seal; not modified.
 * @param key The sealing key, `ring.current`.
 * @param maxAge Seconds until `exp`.
 * @param now The current time in whole seconds since the epoch.
 * @throws TypeError when `payload` is not a plain object, or `maxAge`/`now` is not a finite number.
 * @example
 * ```ts
 * const ring = deriveKeyRing(['a-long-random-secret'], 'authjs.session-token')
 * const now = Math.floor(Date.now() / 1000)
 * const token = sealSessionToken({ sub: '42' }, ring.current, 30 * 24 * 60 * 60, now)
 * openSessionToken(token, ring, now)?.payload.sub // '42'
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7.1
 */
export function sealSessionToken(payload: JWT, key: SessionKey, maxAge: number, now: number): string {
  if (!isPlainObject(payload)) throw new TypeError('sealSessionToken: the payload must be a plain object')
  if (!Number.isFinite(maxAge)) throw new TypeError('sealSessionToken: `maxAge` must be a finite number of seconds')
  if (!Number.isFinite(now)) throw new TypeError('sealSessionToken: `now` must be a finite number of seconds')
  // Same order as Auth.js: setIssuedAt(), setExpirationTime(), setJti() on a copy of the token.
  const claims: JWT = { ...payload }
  claims.iat = now
  claims.exp = now + maxAge
  claims.jti = randomUUID()
  return encryptJwe(JSON.stringify(claims), key)
}

/**
 * Opens a session JWT: decrypts it, requires a JSON object, and checks the time claims the way
 * jose's `jwtDecrypt` does with `clockTolerance: 15` (`exp` expired when `exp <= now - 15`, `nbf`
 * rejected when `nbf > now + 15`, `iat`/`exp`/`nbf` must be numbers when present).
 *
 * @param token The cookie value.
 * @param ring The keys of the configured secrets.
 * @param now The current time in whole seconds since the epoch.
 * @returns The claims and their JSON, or `null` on any failure.
 * @example
 * ```ts
 * const ring = deriveKeyRing(['a-long-random-secret'], 'authjs.session-token')
 * const token = sealSessionToken({ sub: '42' }, ring.current, 60, 1_700_000_000)
 * openSessionToken(token, ring, 1_700_000_000)?.payload.exp // 1700000060
 * openSessionToken(token, ring, 1_700_000_075) // null: expired beyond the tolerance
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-7.2
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-4.1.4
 */
export function openSessionToken(token: string, ring: KeyRing, now: number): OpenedToken | null {
  const plaintext = decryptJwe(token, ring)
  if (plaintext === null) return null
  let payload: unknown
  try {
    payload = JSON.parse(plaintext)
  } catch {
    return null
  }
  if (!isPlainObject(payload)) return null
  const { iat, nbf, exp } = payload
  if (iat !== undefined && typeof iat !== 'number') return null
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_TOLERANCE)) return null
  if (exp !== undefined && (typeof exp !== 'number' || exp <= now - CLOCK_TOLERANCE)) return null
  return { payload: payload as JWT, plaintext }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

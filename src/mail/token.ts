/**
 * E-mail sign-in tokens: generated from the CSPRNG, stored only as a hash. The hash is Auth.js's
 * (`sha256(token + secret)`, hex), so a `VerificationToken` table written by either library is
 * read by the other.
 *
 * A database leak then gives no usable link: the token is in the e-mail only, and the hash is
 * keyed by the secret.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * The default verification token: 32 random bytes (256 bits), hex. Guessing one among live tokens
 * is out of reach, and hex survives every mail client's line wrapping and URL handling.
 *
 * @example
 * generateVerificationToken() // '9f86d081884c7d65...' (64 characters)
 */
export function generateVerificationToken(): string {
  return randomBytes(32).toString('hex')
}

/**
 * What the adapter stores for `token`: `sha256(token + secret)` in lower-case hex, as Auth.js
 * stores it.
 *
 * @param token The token in the link.
 * @param secret The secret (the first configured one for new tokens).
 * @example
 * hashVerificationToken('abc', 'secret') // sha256('abcsecret'), 64 hex characters
 */
export function hashVerificationToken(token: string, secret: string): string {
  return createHash('sha256').update(`${token}${secret}`).digest('hex')
}

/**
 * Whether two stored token hashes are the same, in constant time (the lookup found the row by its
 * hash; this guards against an adapter whose comparison ignores case or trailing spaces).
 */
export function sameTokenHash(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * The value of the cookie that binds a link to the browser that asked for it: an HMAC of the
 * token (keyed by the secret, in a domain of its own), so the cookie neither is nor reveals the link.
 *
 * @param token The token in the link.
 * @param secret The secret (the first configured one when the link is mailed).
 */
export function linkBinding(token: string, secret: string): string {
  return createHmac('sha256', secret).update(`portcullis email-link\0${token}`).digest('base64url')
}

/** Whether `cookie` is the binding of `token` under one of `secrets`, compared in constant time. */
export function isBoundLink(cookie: string | undefined, token: string, secrets: readonly string[]): boolean {
  if (!cookie) return false
  const given = Buffer.from(cookie)
  return secrets.some((secret) => {
    const expected = Buffer.from(linkBinding(token, secret))
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/**
 * The key's format, after GitHub's tokens: a fixed prefix, 32 random base62 characters (190 bits from
 * the CSPRNG; 166 of them stay unknown after the four that lists show, above the 160 the issue asks), and 6 base62 characters of CRC32 over the prefix and the
 * random part. The checksum lets a secret scanner tell a real key from a look-alike, and this server
 * refuse a mistyped or mangled key before any database lookup. What is stored is the SHA-256 of the
 * whole key: the key is high-entropy, so an unkeyed hash is as strong as a keyed one against
 * guessing, and survives a rotation of the app's secret.
 *
 * @see https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/
 */
import { hash } from 'node:crypto'
import { base62Checksum, CHECKSUM_LENGTH, randomBase62 } from '../../security/base62-token.js'

/** Random characters per key: 32 × log2(62) ≈ 190.5 bits. */
export const RANDOM_LENGTH = 32
const BODY = new RegExp(`^[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

/** A new key with `prefix`. */
export function generateKey(prefix: string): string {
  const random = randomBase62(RANDOM_LENGTH)
  return `${prefix}${random}${checksum(prefix + random)}`
}

/** CRC32 of `text` in 6 base62 characters. */
export const checksum = base62Checksum

/** Whether `key` has this prefix, the right length and alphabet, and a checksum that matches: no lookup for anything else. */
export function wellFormed(key: string, prefix: string): boolean {
  if (!key.startsWith(prefix)) return false
  const body = key.slice(prefix.length)
  if (!BODY.test(body)) return false
  return checksum(prefix + body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH)
}

/** SHA-256 of the whole key, hex: the stored, indexed value (one-shot `hash`: a third of a `createHash`'s cost). */
export function keyHash(key: string): string {
  return hash('sha256', key, 'hex')
}

/** What lists show: the prefix, four characters, an ellipsis, the last four (of the checksum: no secret). The four leave 28 random characters, 166 bits, unknown. */
export function displayOf(key: string, prefix: string): string {
  return `${prefix}${key.slice(prefix.length, prefix.length + 4)}…${key.slice(-4)}`
}

/** The regular expression secret scanners use for keys with `prefix` (docs/api-keys.md). */
export function scannerPattern(prefix: string): string {
  return `\\b${prefix}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}\\b`
}

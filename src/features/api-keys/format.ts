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
import { hash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** Random characters per key: 32 × log2(62) ≈ 190.5 bits. */
export const RANDOM_LENGTH = 32
/** Checksum characters: 62^6 > 2^32, so a CRC32 always fits. */
export const CHECKSUM_LENGTH = 6
const BODY = new RegExp(`^[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

/** A new key with `prefix`. */
export function generateKey(prefix: string): string {
  let random = ''
  while (random.length < RANDOM_LENGTH) {
    // 248 = 4 × 62: bytes above it are dropped, so every character is equally likely.
    for (const byte of randomBytes(RANDOM_LENGTH * 2)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += ALPHABET[byte % 62]
    }
  }
  return `${prefix}${random}${checksum(prefix + random)}`
}

/** CRC32 of `text` in 6 base62 characters. */
export function checksum(text: string): string {
  let value = crc32(text)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out
}

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

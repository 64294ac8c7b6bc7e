/**
 * The text of the secrets Portcullis hands out after GitHub's token format (API keys, SCIM tokens):
 * random base62 characters from the CSPRNG, and a CRC32 of the token in base62 that lets a secret
 * scanner tell a real one from a look-alike, and this server refuse a mangled one before any lookup.
 *
 * @see https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/
 */
import { randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Base62 characters of a CRC32: 62^6 > 2^32, so a CRC32 always fits. */
export const CHECKSUM_LENGTH = 6

/** `length` base62 characters from the CSPRNG, each equally likely (log2(62) ≈ 5.95 bits each). */
export function randomBase62(length: number): string {
  let random = ''
  while (random.length < length) {
    // 248 = 4 × 62: bytes above it are dropped, so every character is equally likely.
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && random.length < length) random += ALPHABET[byte % 62]
    }
  }
  return random
}

/** CRC32 of `text` in `CHECKSUM_LENGTH` base62 characters. */
export function base62Checksum(text: string): string {
  let value = crc32(text)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out
}

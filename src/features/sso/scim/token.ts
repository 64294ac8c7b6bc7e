/**
 * A connection's SCIM bearer token: `pcscim_<connection id>_<secret>`, the secret 32 base62
 * characters from the CSPRNG (32 × log2(62) ≈ 190 bits) and 6 of CRC32 over what precedes them, as
 * the API keys' format makes them (src/features/api-keys/format.ts, whose idea is repeated here: a
 * wing does not import a sibling's insides). The connection id in the token lets a request find its
 * connection by primary key; the checksum refuses a mangled token before any lookup. What is stored
 * is the SHA-256 of the whole token: the token is high-entropy, so an unkeyed hash is as strong as a
 * keyed one against guessing, and survives a rotation of the app's secret.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'

export const SCIM_TOKEN_PREFIX = 'pcscim_'
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
const SECRET = new RegExp(`^[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)
// A connection id as the adapters make them (UUIDs; a custom adapter's ids of the same alphabet).
const CONNECTION_ID = /^[0-9A-Za-z-]{1,64}$/

/** A new token for the connection. */
export function generateScimToken(connectionId: string): string {
  if (!CONNECTION_ID.test(connectionId)) throw new TypeError(`A SCIM token names its connection: the id ${JSON.stringify(connectionId)} has characters a token cannot carry.`)
  let random = ''
  while (random.length < RANDOM_LENGTH) {
    // 248 = 4 × 62: bytes above it are dropped, so every character is equally likely.
    for (const byte of randomBytes(RANDOM_LENGTH * 2)) if (byte < 248 && random.length < RANDOM_LENGTH) random += ALPHABET[byte % 62]
  }
  const head = `${SCIM_TOKEN_PREFIX}${connectionId}_${random}`
  return `${head}${checksum(head)}`
}

function checksum(text: string): string {
  let value = crc32(text)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out
}

/** The connection id a well-formed token names, or null for anything else (no lookup is made for it). */
export function connectionIdOfScimToken(token: string): string | null {
  if (!token.startsWith(SCIM_TOKEN_PREFIX) || token.length > 200) return null
  const rest = token.slice(SCIM_TOKEN_PREFIX.length)
  const split = rest.lastIndexOf('_')
  const connectionId = rest.slice(0, split)
  const secret = rest.slice(split + 1)
  if (split <= 0 || !CONNECTION_ID.test(connectionId) || !SECRET.test(secret)) return null
  return checksum(token.slice(0, -CHECKSUM_LENGTH)) === secret.slice(RANDOM_LENGTH) ? connectionId : null
}

/** SHA-256 of the whole token, hex: what the connection's settings keep. */
export function scimTokenHash(token: string): string {
  return hash('sha256', token, 'hex')
}

/** Whether `token` hashes to `stored`, compared in constant time (both are 32-byte digests). */
export function scimTokenMatches(token: string, stored: unknown): boolean {
  if (typeof stored !== 'string' || !/^[0-9a-f]{64}$/.test(stored)) return false
  return timingSafeEqual(Buffer.from(scimTokenHash(token), 'hex'), Buffer.from(stored, 'hex'))
}

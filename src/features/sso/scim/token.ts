/**
 * A connection's SCIM bearer token: `pcscim_<connection id>_<secret>`, the secret 32 base62
 * characters from the CSPRNG (32 × log2(62) ≈ 190 bits) and 6 of CRC32 over what precedes them, made
 * as the API keys' are (src/security/base62-token.ts). The connection id in the token lets a request find its
 * connection by primary key; the checksum refuses a mangled token before any lookup. What is stored
 * is the SHA-256 of the whole token: the token is high-entropy, so an unkeyed hash is as strong as a
 * keyed one against guessing, and survives a rotation of the app's secret.
 */
import { hash, timingSafeEqual } from 'node:crypto'
import { base62Checksum, CHECKSUM_LENGTH, randomBase62 } from '../../../security/base62-token.js'

export const SCIM_TOKEN_PREFIX = 'pcscim_'
const RANDOM_LENGTH = 32
const SECRET = new RegExp(`^[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)
// A connection id as the adapters make them (UUIDs; a custom adapter's ids of the same alphabet).
const CONNECTION_ID = /^[0-9A-Za-z-]{1,64}$/

/** A new token for the connection. */
export function generateScimToken(connectionId: string): string {
  if (!CONNECTION_ID.test(connectionId)) throw new TypeError(`A SCIM token names its connection: the id ${JSON.stringify(connectionId)} has characters a token cannot carry.`)
  const head = `${SCIM_TOKEN_PREFIX}${connectionId}_${randomBase62(RANDOM_LENGTH)}`
  return `${head}${base62Checksum(head)}`
}

/** The connection id a well-formed token names, or null for anything else (no lookup is made for it). */
export function connectionIdOfScimToken(token: string): string | null {
  if (!token.startsWith(SCIM_TOKEN_PREFIX) || token.length > 200) return null
  const rest = token.slice(SCIM_TOKEN_PREFIX.length)
  const split = rest.lastIndexOf('_')
  const connectionId = rest.slice(0, split)
  const secret = rest.slice(split + 1)
  if (split <= 0 || !CONNECTION_ID.test(connectionId) || !SECRET.test(secret)) return null
  return base62Checksum(token.slice(0, -CHECKSUM_LENGTH)) === secret.slice(RANDOM_LENGTH) ? connectionId : null
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

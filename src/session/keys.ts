/**
 * Session-cookie keys: derived once from the configured secrets, the way Auth.js v5 derives them,
 * and kept ready to use (KeyObjects, HMAC pads, a block decipher) so that reading a cookie never
 * derives or sets up anything.
 *
 * @see https://www.rfc-editor.org/rfc/rfc5869 HKDF
 * @see https://www.rfc-editor.org/rfc/rfc7638 JWK Thumbprint (the `kid`)
 */
import { createDecipheriv, createHash, createSecretKey, hkdfSync } from 'node:crypto'
import type { KeyObject } from 'node:crypto'

/**
 * What `createDecipheriv` returns for a cipher without an auth tag. Named through the function, not
 * imported: @types/node 20 and 22 call the class `Decipher`, 24 and later `Decipheriv`, and these
 * declarations ship to apps on either (an app's `skipLibCheck: false` checks them).
 */
export type BlockDecipher = ReturnType<typeof createDecipheriv>

/**
 * The JWE content encryption algorithms a session token may use: Auth.js seals with
 * `A256CBC-HS512` and also accepts `A256GCM` on read.
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.1
 */
export type ContentEncryption = 'A256CBC-HS512' | 'A256GCM'

/**
 * One derived content encryption key with everything the codec needs precomputed.
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.2.2.1
 */
export interface SessionKey {
  /** RFC 7638 thumbprint of the key as an `oct` JWK: what Auth.js puts in the `kid` header. */
  readonly kid: string
  readonly enc: ContentEncryption
  /** The AES-256 key: ENC_KEY (last 32 bytes) for A256CBC-HS512, the whole key for A256GCM. */
  readonly encryptionKey: KeyObject
  /** What A256CBC-HS512 needs besides ENC_KEY; `null` for A256GCM. */
  readonly cbc: CbcKey | null
  /** The base64url protected header this key seals with: `{"alg":"dir","enc":…,"kid":…}`. */
  readonly protectedHeader: string
}

/**
 * An A256CBC-HS512 key's parts, set up once so that opening a token creates no crypto object
 * (jwe.ts says why that matters).
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.2.2.1
 */
export interface CbcKey {
  /**
   * HMAC-SHA-512 with MAC_KEY (the first 32 bytes), as RFC 2104 defines it: the key zero-padded to
   * SHA-512's 128-byte block, XORed with 0x36 (inner) and 0x5c (outer). Each pad is the start of a
   * block of this key's own, where jwe.ts writes the rest of the hash's input per token:
   * `innerBlock` has room for `CBC_MESSAGE_ROOM` bytes of message after its pad, `outerBlock` for
   * the inner hash. Made with `Buffer.alloc`, never from Node's shared pool, so the pads are in no
   * memory that other code is handed; read or written only inside one synchronous call.
   * @see https://www.rfc-editor.org/rfc/rfc2104#section-2
   */
  readonly innerBlock: Buffer
  readonly outerBlock: Buffer
  /**
   * AES-256 in ECB mode on ENC_KEY, without padding: the bare block decryption, from which jwe.ts
   * builds CBC decryption. Made once and used for every token; it keeps no state between calls
   * fed whole blocks.
   */
  readonly blockDecipher: BlockDecipher
}

/**
 * The keys of every configured secret for one salt (the session cookie name).
 * @see https://www.rfc-editor.org/rfc/rfc7516#section-4.1.6 (`kid`)
 */
export interface KeyRing {
  readonly salt: string
  /** The A256CBC-HS512 key of the first secret: the only key that seals. */
  readonly current: SessionKey
  /**
   * The key whose `kid` matches (none if no secret matches), or, with no `kid`, every key of that
   * `enc` in secret order.
   */
  keysFor(enc: ContentEncryption, kid: string | undefined): readonly SessionKey[]
}

/** Key length in bytes per `enc`: A256CBC-HS512 needs MAC_KEY and ENC_KEY, 32 bytes each. */
const KEY_BYTES: Readonly<Record<ContentEncryption, number>> = { 'A256CBC-HS512': 64, A256GCM: 32 }

const NO_KEYS: readonly SessionKey[] = Object.freeze([])

/**
 * Derives the session keys of every secret, synchronously, once at init.
 *
 * Byte for byte what `@auth/core/jwt` derives per request: HKDF-SHA-256 with the cookie name as salt
 * and `Auth.js Generated Encryption Key (<salt>)` as info, 64 bytes for A256CBC-HS512 and 32 for
 * A256GCM; `kid` is the JWK thumbprint with SHA-512 resp. SHA-256 (`sha${bytes * 8}` in Auth.js).
 *
 * @param secrets The secrets, newest first; the first one seals.
 * @param salt The session cookie name, e.g. `authjs.session-token`.
 * @throws TypeError when `secrets` is empty or holds an empty secret.
 * @example
 * ```ts
 * const ring = deriveKeyRing(['a-long-random-secret'], 'authjs.session-token')
 * ring.current.kid // the kid Auth.js writes for this secret
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc5869
 * @see https://www.rfc-editor.org/rfc/rfc7638#section-3
 */
export function deriveKeyRing(secrets: readonly string[], salt: string): KeyRing {
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new TypeError('deriveKeyRing: pass at least one secret (set AUTH_SECRET or the `secret` option)')
  }
  if (typeof salt !== 'string') throw new TypeError('deriveKeyRing: `salt` must be a string (the session cookie name)')

  const byKid = new Map<string, readonly SessionKey[]>()
  const byEnc: Record<ContentEncryption, SessionKey[]> = { 'A256CBC-HS512': [], A256GCM: [] }
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length === 0) {
      throw new TypeError('deriveKeyRing: every secret must be a non-empty string')
    }
    for (const enc of ['A256CBC-HS512', 'A256GCM'] as const) {
      const key = deriveSessionKey(secret, salt, enc)
      // The same secret listed twice yields the same kid; keep the first so each key is tried once.
      if (byKid.has(key.kid)) continue
      byKid.set(key.kid, Object.freeze([key]))
      byEnc[enc].push(key)
    }
  }

  const current = byEnc['A256CBC-HS512'][0]
  if (current === undefined) throw new TypeError('deriveKeyRing: no key derived') // unreachable: secrets is non-empty
  const allCbc = Object.freeze(byEnc['A256CBC-HS512'])
  const allGcm = Object.freeze(byEnc.A256GCM)

  return Object.freeze({
    salt,
    current,
    keysFor(enc: ContentEncryption, kid: string | undefined): readonly SessionKey[] {
      if (kid === undefined) return enc === 'A256GCM' ? allGcm : enc === 'A256CBC-HS512' ? allCbc : NO_KEYS
      const match = byKid.get(kid)
      // Thumbprints of the two key sizes differ, but a kid must also name a key of the header's enc.
      return match !== undefined && match[0]?.enc === enc ? match : NO_KEYS
    },
  })
}

function deriveSessionKey(secret: string, salt: string, enc: ContentEncryption): SessionKey {
  const length = KEY_BYTES[enc]
  const raw = Buffer.from(hkdfSync('sha256', secret, salt, `Auth.js Generated Encryption Key (${salt})`, length))
  const kid = jwkThumbprint(raw)
  const protectedHeader = Buffer.from(JSON.stringify({ alg: 'dir', enc, kid })).toString('base64url')
  const key: SessionKey =
    enc === 'A256CBC-HS512'
      ? // RFC 7518 §5.2.2.1: MAC_KEY is the first half of the key, ENC_KEY the second.
        { kid, enc, encryptionKey: createSecretKey(raw.subarray(32)), cbc: cbcKey(raw.subarray(0, 32), raw.subarray(32)), protectedHeader }
      : { kid, enc, encryptionKey: createSecretKey(raw), cbc: null, protectedHeader }
  raw.fill(0) // everything above copied what it needs
  return Object.freeze(key)
}

/** SHA-512's block size in bytes: HMAC pads its key to this (the pads at the start of `innerBlock` and `outerBlock`). */
export const SHA512_BLOCK_BYTES = 128
/** SHA-512's output in bytes (the inner hash, after the outer pad in `outerBlock`). */
const SHA512_BYTES = 64
/**
 * The message bytes `innerBlock` holds after its pad: the header, IV, ciphertext and length of a
 * token of up to about 8 KB (a session token is at most `jwt.maxSize`, 4,096 by default; chunked
 * ones are joined before they are opened). A longer message is hashed after the pad without being
 * put next to it (jwe.ts).
 */
const CBC_MESSAGE_ROOM = 8 * 1024

function cbcKey(macKey: Buffer, encryptionKey: Buffer): CbcKey {
  const innerBlock = Buffer.alloc(SHA512_BLOCK_BYTES + CBC_MESSAGE_ROOM)
  const outerBlock = Buffer.alloc(SHA512_BLOCK_BYTES + SHA512_BYTES)
  innerBlock.fill(0x36, 0, SHA512_BLOCK_BYTES)
  outerBlock.fill(0x5c, 0, SHA512_BLOCK_BYTES)
  for (let i = 0; i < macKey.length; i++) {
    innerBlock[i]! ^= macKey[i]!
    outerBlock[i]! ^= macKey[i]!
  }
  const blockDecipher = createDecipheriv('aes-256-ecb', createSecretKey(encryptionKey), null)
  blockDecipher.setAutoPadding(false)
  return Object.freeze({ innerBlock, outerBlock, blockDecipher })
}

/**
 * RFC 7638 thumbprint of a symmetric key: the hash of `{"k":…,"kty":"oct"}` (members in
 * lexicographic order, no whitespace), with SHA-512 for a 64-byte key and SHA-256 for a 32-byte
 * key, as jose's `calculateJwkThumbprint(…, 'sha512' | 'sha256')` computes it for Auth.js.
 */
function jwkThumbprint(raw: Buffer): string {
  const members = `{"k":"${raw.toString('base64url')}","kty":"oct"}`
  return createHash(raw.length === 64 ? 'sha512' : 'sha256')
    .update(members)
    .digest('base64url')
}

/**
 * The key ring of one purpose (`salt`) for each set of secrets, derived on first use and kept: what
 * the sealed values of that purpose (OAuth checks, passkey challenges) are sealed and opened with.
 * A resolved config's `secrets` array is the same object for its lifetime, so it keys the cache.
 *
 * @example
 * ```ts
 * const checksRing = keyRingFor('portcullis.oauth-checks')
 * checksRing(config.secrets).current // derived once per config
 * ```
 */
export function keyRingFor(salt: string): (secrets: readonly string[]) => KeyRing {
  const rings = new WeakMap<readonly string[], KeyRing>()
  return (secrets) => {
    let ring = rings.get(secrets)
    if (!ring) {
      ring = deriveKeyRing(secrets, salt)
      rings.set(secrets, ring)
    }
    return ring
  }
}

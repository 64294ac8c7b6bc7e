/**
 * The session-cookie JWE: compact serialization, `alg: dir`, A256CBC-HS512 (and A256GCM on read),
 * built on node:crypto's synchronous primitives because it runs on every request. jose does the same
 * work through WebCrypto, where each awaited call costs a thread-pool round trip (~70 µs here);
 * the tests cross-check every byte of this file's output against jose and `@auth/core/jwt`.
 *
 * Opening a token creates no node:crypto object: the HMAC is two one-shot `hash` calls over the
 * key's precomputed pads, and CBC decryption runs on the key's long-lived AES block decipher. Each
 * Hmac or Decipher object is a native handle the garbage collector has to finalise, and in a loaded
 * HTTP server the two cost several times their own work (bench/README.md, "HTTP": the floor rows).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7516#section-7.1 JWE Compact Serialization
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.2 AES_CBC_HMAC_SHA2
 */
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import v8 from 'node:v8'
import { SHA512_BLOCK_BYTES, type BlockDecipher, type CbcKey, type ContentEncryption, type KeyRing, type SessionKey } from './keys.js'

/**
 * Seals `plaintext` with `key` (A256CBC-HS512): `header..iv.ciphertext.tag`.
 *
 * @param plaintext The JWT claims set as JSON.
 * @param key An A256CBC-HS512 key, normally `ring.current`.
 * @throws TypeError when `key` is not an A256CBC-HS512 key.
 * @example
 * ```ts
 * const ring = deriveKeyRing(['a-long-random-secret'], 'authjs.session-token')
 * const jwe = encryptJwe('{"sub":"42"}', ring.current)
 * decryptJwe(jwe, ring) // '{"sub":"42"}'
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7516#section-5.1
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.2.2.1
 */
export function encryptJwe(plaintext: string, key: SessionKey): string {
  if (key.enc !== 'A256CBC-HS512' || key.cbc === null) {
    throw new TypeError('encryptJwe: session tokens are sealed with an A256CBC-HS512 key')
  }
  const header = key.protectedHeader
  const iv = randomBytes(CBC_IV_BYTES)
  const cipher = createCipheriv('aes-256-cbc', key.encryptionKey, iv)
  const first = cipher.update(plaintext, 'utf8')
  const last = cipher.final()
  const ciphertext = first.length === 0 ? last : Buffer.concat([first, last])
  const tag = cbcTag(key.cbc, header, iv, ciphertext)
  return `${header}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${tag.toString('base64url')}`
}

/**
 * Opens a compact JWE session token: the plaintext, or `null` when the token is malformed, uses
 * anything but `dir` with A256CBC-HS512/A256GCM, names an unknown key, or fails authentication.
 * Never throws on attacker input: every failure looks the same from outside.
 *
 * @param token The cookie value.
 * @param ring The keys of the configured secrets.
 * @example
 * ```ts
 * const ring = deriveKeyRing(['a-long-random-secret'], 'authjs.session-token')
 * decryptJwe(encryptJwe('{}', ring.current), ring) // '{}'
 * decryptJwe('garbage', ring) // null
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7516#section-5.2
 * @see https://www.rfc-editor.org/rfc/rfc7518#section-5.2.2.2
 */
export function decryptJwe(token: string, ring: KeyRing): string | null {
  try {
    return open(token, ring)
  } catch {
    // node:crypto throws on bad padding or a GCM tag mismatch; both mean "not ours".
    return null
  }
}

const CBC_IV_BYTES = 16
/** A256CBC-HS512 tag: the first half (T_LEN = 32 bytes) of the HMAC-SHA-512 output. */
const CBC_TAG_BYTES = 32
const GCM_TAG_BYTES = 16
/** Encoded lengths of the fixed-size parts, checked before decoding anything. */
const CBC_IV_CHARS = 22
export const CBC_TAG_CHARS = 43
const GCM_IV_CHARS = 16
const GCM_TAG_CHARS = 22

/**
 * Value of each base64url character by its code (-1 for others), to check that the last one carries
 * no stray low bits, and for the token cache's fingerprints (token-cache.ts).
 */
export const SEXTET = new Int8Array(128).fill(-1)
for (let i = 0; i < 64; i++) {
  SEXTET['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.charCodeAt(i)] = i
}

/**
 * Whether V8 holds `text` one byte per character, so that none is past U+00FF (Node 22.15 and
 * later can tell, in a few instructions; elsewhere, and for a string V8 holds in two bytes per
 * character whatever it holds, the caller counts its UTF-8 bytes instead, about 2.5 instructions a
 * character: 1,600 a session cookie on Node 24).
 */
const oneByte = (v8 as { isStringOneByteRepresentation?: (text: string) => boolean }).isStringOneByteRepresentation ?? (() => false)

/** `.`, which ends each part of a compact JWE but the last. */
export const DOT = 46

/** The one header seen last, parsed: every valid cookie of a deployment carries the same header. */
let lastHeader = ''
let lastParsed: ParsedHeader | null = null

interface ParsedHeader {
  readonly enc: ContentEncryption
  readonly kid: string | undefined
}

function open(token: string, ring: KeyRing): string | null {
  if (typeof token !== 'string') return null
  // Every part is strict base64url (RFC 7515 §2), so the whole token is refused at once for what
  // Node's decoder would take there: a character past U+00FF (read by its low byte: `Ł`, U+0141, as
  // `A`) and the standard alphabet's `+` and `/`. decodeBase64url refuses everything else, the
  // characters from U+0080 to U+00FF included (the decoder skips them). A cookie from Node's HTTP
  // parser is always held one byte per character.
  if (!oneByte(token) && Buffer.byteLength(token, 'utf8') !== token.length) return null
  if (token.indexOf('+') !== -1 || token.indexOf('/') !== -1) return null
  // Compact serialization: header, an empty encrypted key (`dir` uses the shared key directly, RFC
  // 7518 §4.5), IV, ciphertext and tag. The IV and tag have fixed lengths per `enc`, so only the
  // header's end is searched for; a sixth part would leave a `.` inside one of the others, which
  // decodeBase64url refuses.
  const d1 = token.indexOf('.')
  if (d1 <= 0 || token.charCodeAt(d1 + 1) !== DOT) return null

  const encodedHeader = token.slice(0, d1)
  const header = encodedHeader === lastHeader ? lastParsed : parseHeader(encodedHeader)
  if (header === null) return null
  const cbc = header.enc === 'A256CBC-HS512'
  const d3 = d1 + 2 + (cbc ? CBC_IV_CHARS : GCM_IV_CHARS)
  const d4 = token.length - 1 - (cbc ? CBC_TAG_CHARS : GCM_TAG_CHARS)
  if (d4 <= d3 || token.charCodeAt(d3) !== DOT || token.charCodeAt(d4) !== DOT) return null
  const keys = ring.keysFor(header.enc, header.kid)
  if (keys.length === 0) return null

  const iv = decodeBase64url(token.slice(d1 + 2, d3))
  const ciphertext = decodeBase64url(token.slice(d3 + 1, d4))
  const tag = decodeBase64url(token.slice(d4 + 1))
  if (iv === null || tag === null || ciphertext === null) return null
  // PKCS#7 output is a non-empty whole number of AES blocks.
  if (cbc && (ciphertext.length === 0 || ciphertext.length % 16 !== 0)) return null
  const plaintext = cbc ? openCbc(keys, encodedHeader, iv, ciphertext, tag) : openGcm(keys, encodedHeader, iv, ciphertext, tag)
  if (plaintext === null || !isUtf8(plaintext)) return null
  return stripBom(plaintext.toString('utf8'))
}

function openCbc(keys: readonly SessionKey[], aad: string, iv: Buffer, ciphertext: Buffer, tag: Buffer): Buffer | null {
  for (const key of keys) {
    if (key.cbc === null) continue
    // Authenticate before decrypting (RFC 7518 §5.2.2.2), in constant time, so that a forged
    // ciphertext never reaches the padding check (no padding oracle).
    if (!timingSafeEqual(cbcTag(key.cbc, aad, iv, ciphertext), tag)) continue
    return decryptCbc(key.cbc.blockDecipher, iv, ciphertext)
  }
  return null
}

/**
 * AES-256-CBC decryption and PKCS#7 unpadding (RFC 7518 §5.2.2.2, steps 5-6) on the key's AES block
 * decipher: P_i = D(C_i) XOR C_(i-1), with C_0 = IV. `ciphertext` is a non-empty whole number of
 * blocks (checked by the caller) whose tag has verified, so a bad padding here is no oracle.
 *
 * @returns The plaintext, or `null` when the padding is not PKCS#7.
 * @see https://nvlpubs.nist.gov/nistpubs/Legacy/SP/nistspecialpublication800-38a.pdf §6.2 (CBC)
 * @see https://www.rfc-editor.org/rfc/rfc5652#section-6.3 (the padding)
 */
function decryptCbc(blockDecipher: BlockDecipher, iv: Buffer, ciphertext: Buffer): Buffer | null {
  // Without padding, ECB returns every whole block at once and keeps nothing for the next call.
  const plain = blockDecipher.update(ciphertext)
  if (plain.length !== ciphertext.length) throw new Error('decryptCbc: the block decipher held back data')
  for (let i = 0; i < CBC_IV_BYTES; i++) plain[i]! ^= iv[i]!
  for (let i = CBC_IV_BYTES; i < plain.length; i++) plain[i]! ^= ciphertext[i - CBC_IV_BYTES]!
  const padding = plain[plain.length - 1]!
  if (padding < 1 || padding > CBC_IV_BYTES) return null
  for (let i = plain.length - padding; i < plain.length - 1; i++) if (plain[i] !== padding) return null
  return plain.subarray(0, plain.length - padding)
}

function openGcm(keys: readonly SessionKey[], aad: string, iv: Buffer, ciphertext: Buffer, tag: Buffer): Buffer | null {
  const aadBytes = Buffer.from(aad, 'latin1')
  for (const key of keys) {
    const decipher = createDecipheriv('aes-256-gcm', key.encryptionKey, iv, { authTagLength: GCM_TAG_BYTES })
    decipher.setAAD(aadBytes)
    decipher.setAuthTag(tag)
    const first = decipher.update(ciphertext)
    try {
      const last = decipher.final() // throws when the tag does not verify
      return last.length === 0 ? first : Buffer.concat([first, last])
    } catch {
      continue
    }
  }
  return null
}

/**
 * T = first T_LEN bytes of HMAC-SHA-512(MAC_KEY, AAD || IV || ciphertext || AL), with AAD the
 * ASCII of the encoded protected header and AL its length in bits as a 64-bit big-endian integer.
 * The HMAC is RFC 2104's H((K XOR opad) || H((K XOR ipad) || message)), the pads made once per key.
 *
 * @see https://www.rfc-editor.org/rfc/rfc2104#section-2
 */
function cbcTag(key: CbcKey, aad: string, iv: Buffer, ciphertext: Buffer): Buffer {
  const { innerBlock, outerBlock } = key
  const length = SHA512_BLOCK_BYTES + aad.length + iv.length + ciphertext.length + 8
  // The message goes after the pad in the key's own block (keys.ts): no pad copied, no buffer made.
  // One too long for it is written at the same place in a buffer of its own, which never holds the
  // pad: the pad and the message then go to the hash one after the other.
  const inner = length <= innerBlock.length ? innerBlock : Buffer.allocUnsafe(length)
  // The encoded header is base64url, so one byte per character.
  let offset = SHA512_BLOCK_BYTES + inner.write(aad, SHA512_BLOCK_BYTES, 'latin1')
  offset += iv.copy(inner, offset)
  offset += ciphertext.copy(inner, offset)
  const bits = aad.length * 8
  inner.writeUInt32BE(Math.floor(bits / 0x1_0000_0000), offset)
  inner.writeUInt32BE(bits >>> 0, offset + 4)
  const innerHash =
    inner === innerBlock
      ? hash('sha512', inner.subarray(0, length), 'buffer')
      : createHash('sha512').update(innerBlock.subarray(0, SHA512_BLOCK_BYTES)).update(inner.subarray(SHA512_BLOCK_BYTES)).digest()
  innerHash.copy(outerBlock, SHA512_BLOCK_BYTES)
  return hash('sha512', outerBlock, 'buffer').subarray(0, CBC_TAG_BYTES)
}

/**
 * Parses and vets the protected header, remembering the last good one. Only `dir` is allowed,
 * `zip` is refused (no decompression of attacker-chosen sizes) and so is any `crit` (we implement
 * no extension, RFC 7516 §4.1.13).
 */
function parseHeader(encoded: string): ParsedHeader | null {
  const bytes = decodeBase64url(encoded)
  if (bytes === null || !isUtf8(bytes)) return null
  let header: unknown
  try {
    header = JSON.parse(stripBom(bytes.toString('utf8')))
  } catch {
    return null
  }
  if (!isJsonObject(header)) return null
  const { alg, enc, kid } = header
  if (alg !== 'dir') return null
  if (enc !== 'A256CBC-HS512' && enc !== 'A256GCM') return null
  if (kid !== undefined && typeof kid !== 'string') return null
  if (header['zip'] !== undefined || header['crit'] !== undefined) return null
  const parsed: ParsedHeader = { enc, kid }
  lastHeader = encoded
  lastParsed = parsed
  return parsed
}

/**
 * Strict base64url (RFC 4648 §5, unpadded, as RFC 7515 §2 requires) for a part of a token that
 * `open` has checked to hold nothing past U+00FF and neither `+` nor `/`: no padding, no character
 * outside the URL-safe alphabet, and no stray bits in the last character, so that each encoded
 * string has one meaning.
 */
function decodeBase64url(encoded: string): Buffer | null {
  const length = encoded.length
  if (length % 4 === 1) return null
  if (length % 4 !== 0) {
    const last = SEXTET[encoded.charCodeAt(length - 1)] ?? -1
    // 2 leftover chars carry 1 byte + 4 unused bits; 3 chars carry 2 bytes + 2 unused bits.
    if ((last & (length % 4 === 2 ? 0x0f : 0x03)) !== 0) return null
  }
  // Node's decoder skips any other character up to U+00FF, padding, whitespace and `.` included, so
  // a result shorter than the length promises means one was there. A regular expression over the
  // value gave the same answers at twice the cost.
  const bytes = Buffer.from(encoded, 'base64url')
  return bytes.length === Math.floor((length * 3) / 4) ? bytes : null
}

/** TextDecoder (which jose uses) drops a leading byte order mark; do the same. */
function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** A JSON object (JSON.parse makes no other kind of object than plain ones and arrays). */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

import { describe, it, expect } from '@jest/globals'
import { createCipheriv, createHmac, hkdfSync } from 'node:crypto'
import { CompactEncrypt, EncryptJWT, compactDecrypt, base64url, calculateJwkThumbprint, jwtDecrypt } from 'jose'
import { decryptJwe, encryptJwe } from '../../src/session/jwe.js'
import { deriveKeyRing } from '../../src/session/keys.js'

const SECRET = 'jwe-test-secret-with-enough-entropy-0123456789'
const OTHER_SECRET = 'another-secret-entirely-9876543210-abcdefghij'
const SALT = 'authjs.session-token'

function derive(secret: string, length: 64 | 32, salt = SALT): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, salt, `Auth.js Generated Encryption Key (${salt})`, length))
}

const ring = deriveKeyRing([SECRET], SALT)
const cbcKey = derive(SECRET, 64)
const gcmKey = derive(SECRET, 32)
const PLAINTEXT = JSON.stringify({ name: 'Zoë Ünïcødé 🚀', email: 'zoe@example.com', sub: 'user-1', iat: 1, exp: 2 })

const b64 = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url')

/**
 * A correctly authenticated A256CBC-HS512 JWE with any header and plaintext bytes, written
 * independently of src/ with node:crypto per RFC 7518 §5.2.2.1. It lets the tests present tokens
 * whose tag is valid, so that a rejection can only come from the header or plaintext policy.
 */
function sealCbc(header: object | string | Uint8Array, plaintext: Uint8Array | string, key = cbcKey): string {
  const headerBytes = header instanceof Uint8Array ? header : typeof header === 'string' ? header : JSON.stringify(header)
  const iv = Buffer.alloc(16, 7)
  const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv)
  return sealCbcRaw(iv, Buffer.concat([cipher.update(plaintext), cipher.final()]), key, b64(headerBytes))
}

/** Like sealCbc, but the plaintext goes in as whole blocks, unpadded: any final bytes, valid padding or not. */
function sealCbcBlocks(blocks: Uint8Array, key = cbcKey): string {
  const iv = Buffer.alloc(16, 9)
  const cipher = createCipheriv('aes-256-cbc', key.subarray(32), iv).setAutoPadding(false)
  return sealCbcRaw(iv, Buffer.concat([cipher.update(blocks), cipher.final()]), key)
}

/**
 * An authenticated A256CBC-HS512 token of any IV and ciphertext bytes: its tag (RFC 7518 §5.2.2.1)
 * computed over the encoded header and whatever IV and ciphertext it carries.
 */
function sealCbcRaw(iv: Buffer, ciphertext: Buffer, key = cbcKey, encodedHeader = b64(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' }))): string {
  const al = Buffer.alloc(8)
  al.writeUInt32BE(encodedHeader.length * 8, 4)
  const tag = createHmac('sha512', key.subarray(0, 32)).update(encodedHeader).update(iv).update(ciphertext).update(al).digest().subarray(0, 32)
  return `${encodedHeader}..${b64(iv)}.${b64(ciphertext)}.${b64(tag)}`
}

function joseCbc(payload: Record<string, unknown>, withKid: boolean): Promise<string> {
  const header = withKid ? { alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid } : { alg: 'dir', enc: 'A256CBC-HS512' }
  return new EncryptJWT(payload).setProtectedHeader(header).encrypt(cbcKey)
}

async function joseGcm(payload: Record<string, unknown>, withKid: boolean): Promise<string> {
  const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(gcmKey) }, 'sha256')
  const header = withKid ? { alg: 'dir', enc: 'A256GCM', kid } : { alg: 'dir', enc: 'A256GCM' }
  return new EncryptJWT(payload).setProtectedHeader(header).encrypt(gcmKey)
}

/** Every token with one bit flipped in one byte of one decoded part, re-encoded. */
function* bitFlips(token: string, partIndex: number, mask: number): Generator<string> {
  const parts = token.split('.')
  const bytes = Buffer.from(parts[partIndex] ?? '', 'base64url')
  for (let i = 0; i < bytes.length; i++) {
    const copy = Buffer.from(bytes)
    copy[i] = (copy[i] ?? 0) ^ mask
    const tampered = [...parts]
    tampered[partIndex] = copy.toString('base64url')
    yield tampered.join('.')
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

describe('keys', () => {
  it('derives the kid Auth.js writes: a SHA-512 JWK thumbprint of the 64-byte key', async () => {
    const expected = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(cbcKey) }, 'sha512')
    expect(ring.current.kid).toBe(expected)
    expect(ring.current.kid).toHaveLength(86)
    expect(ring.current.enc).toBe('A256CBC-HS512')
    // HMAC-SHA-512's pads of MAC_KEY (RFC 2104): the first 32 bytes, zero-padded to 128, XOR 0x36 / 0x5c.
    const macKey = Buffer.concat([cbcKey.subarray(0, 32), Buffer.alloc(96)])
    const { innerBlock, outerBlock } = ring.current.cbc!
    expect(innerBlock.subarray(0, 128)).toEqual(Buffer.from(macKey.map((byte) => byte ^ 0x36)))
    expect(outerBlock.subarray(0, 128)).toEqual(Buffer.from(macKey.map((byte) => byte ^ 0x5c)))
    // Each block is memory of its own, not a slice of Node's shared pool that other code is handed.
    for (const block of [innerBlock, outerBlock]) expect([block.byteOffset, block.buffer.byteLength]).toEqual([0, block.length])
    expect(ring.current.encryptionKey.export()).toEqual(Buffer.from(cbcKey.subarray(32)))
  })

  it('derives the A256GCM key with a SHA-256 thumbprint and finds each key by kid', async () => {
    const gcmKid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(gcmKey) }, 'sha256')
    const [gcm] = ring.keysFor('A256GCM', gcmKid)
    expect(gcm?.kid).toBe(gcmKid)
    expect(gcm?.encryptionKey.export()).toEqual(Buffer.from(gcmKey))
    expect(gcm?.cbc).toBeNull()
    expect(ring.keysFor('A256CBC-HS512', ring.current.kid)).toEqual([ring.current])
    // A kid must name a key of the header's enc.
    expect(ring.keysFor('A256CBC-HS512', gcmKid)).toEqual([])
    expect(ring.keysFor('A256GCM', ring.current.kid)).toEqual([])
    expect(ring.keysFor('A256CBC-HS512', 'unknown')).toEqual([])
  })

  it('lists every key of an enc in secret order when there is no kid', () => {
    const rotated = deriveKeyRing([OTHER_SECRET, SECRET], SALT)
    const kids = rotated.keysFor('A256CBC-HS512', undefined).map((key) => key.kid)
    expect(kids).toEqual([deriveKeyRing([OTHER_SECRET], SALT).current.kid, ring.current.kid])
    expect(rotated.current.kid).toBe(kids[0])
    expect(rotated.keysFor('A256GCM', undefined)).toHaveLength(2)
  })

  it('rejects an empty secret list, an empty secret or a salt that is no string with a TypeError saying which', () => {
    const fails = (run: () => unknown, message: string) => {
      expect(run).toThrow(TypeError)
      expect(run).toThrow(message)
    }
    fails(() => deriveKeyRing([], SALT), 'deriveKeyRing: pass at least one secret (set AUTH_SECRET or the `secret` option)')
    fails(() => deriveKeyRing('secret' as never, SALT), 'deriveKeyRing: pass at least one secret')
    fails(() => deriveKeyRing([''], SALT), 'deriveKeyRing: every secret must be a non-empty string')
    fails(() => deriveKeyRing([SECRET, ''], SALT), 'deriveKeyRing: every secret must be a non-empty string')
    fails(() => deriveKeyRing([SECRET, 42 as never], SALT), 'deriveKeyRing: every secret must be a non-empty string')
    fails(() => deriveKeyRing([SECRET], undefined as never), 'deriveKeyRing: `salt` must be a string (the session cookie name)')
  })
})

describe('encryptJwe / decryptJwe', () => {
  it('round-trips, with the header Auth.js writes and an empty encrypted key', () => {
    const token = encryptJwe(PLAINTEXT, ring.current)
    const parts = token.split('.')
    expect(parts).toHaveLength(5)
    expect(Buffer.from(parts[0] ?? '', 'base64url').toString()).toBe(
      `{"alg":"dir","enc":"A256CBC-HS512","kid":"${ring.current.kid}"}`,
    )
    expect(parts[1]).toBe('')
    expect(Buffer.from(parts[2] ?? '', 'base64url')).toHaveLength(16)
    expect(Buffer.from(parts[4] ?? '', 'base64url')).toHaveLength(32)
    expect(decryptJwe(token, ring)).toBe(PLAINTEXT)
  })

  it('uses a fresh IV for every token', () => {
    const a = encryptJwe(PLAINTEXT, ring.current).split('.')
    const b = encryptJwe(PLAINTEXT, ring.current).split('.')
    expect(a[2]).not.toBe(b[2])
    expect(a[3]).not.toBe(b[3])
  })

  it('writes tokens jose decrypts', async () => {
    const token = encryptJwe(PLAINTEXT, ring.current)
    const { payload, protectedHeader } = await jwtDecrypt(token, cbcKey, { currentDate: new Date(1000) })
    expect(payload).toEqual(JSON.parse(PLAINTEXT))
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid })
  })

  it('reads A256CBC-HS512 tokens jose writes, with and without kid', async () => {
    const payload = { sub: 'jose-cbc', n: 1 }
    expect(decryptJwe(await joseCbc(payload, true), ring)).toBe('{"sub":"jose-cbc","n":1}')
    expect(decryptJwe(await joseCbc(payload, false), ring)).toBe('{"sub":"jose-cbc","n":1}')
  })

  it('reads A256GCM tokens jose writes, with and without kid', async () => {
    const payload = { sub: 'jose-gcm', picture: 'https://example.com/ä.png' }
    expect(decryptJwe(await joseGcm(payload, true), ring)).toBe(JSON.stringify(payload))
    expect(decryptJwe(await joseGcm(payload, false), ring)).toBe(JSON.stringify(payload))
  })

  it('reads a kid-less token sealed with any secret of the ring', async () => {
    const rotated = deriveKeyRing([OTHER_SECRET, SECRET], SALT)
    expect(decryptJwe(await joseCbc({ sub: 'old' }, false), rotated)).toBe('{"sub":"old"}')
    expect(decryptJwe(await joseGcm({ sub: 'old' }, false), rotated)).toBe('{"sub":"old"}')
    expect(decryptJwe(await joseCbc({ sub: 'old' }, false), deriveKeyRing([OTHER_SECRET], SALT))).toBeNull()
  })

  it('rotates: a token sealed with the old secret opens with [new, old] and not with [new]', () => {
    const token = encryptJwe(PLAINTEXT, ring.current)
    expect(decryptJwe(token, deriveKeyRing([OTHER_SECRET, SECRET], SALT))).toBe(PLAINTEXT)
    expect(decryptJwe(token, deriveKeyRing([OTHER_SECRET], SALT))).toBeNull()
  })

  it('rejects a token sealed with another secret or another salt', () => {
    const token = encryptJwe(PLAINTEXT, deriveKeyRing([OTHER_SECRET], SALT).current)
    expect(decryptJwe(token, ring)).toBeNull()
    const otherSalt = encryptJwe(PLAINTEXT, deriveKeyRing([SECRET], `__Secure-${SALT}`).current)
    expect(decryptJwe(otherSalt, ring)).toBeNull()
  })

  it('rejects a kid-less token sealed with a key of no secret in the ring', () => {
    const forged = sealCbc({ alg: 'dir', enc: 'A256CBC-HS512' }, PLAINTEXT, derive(OTHER_SECRET, 64))
    expect(decryptJwe(forged, ring)).toBeNull()
  })
})

describe('decryptJwe rejects every tampered token', () => {
  const cbcToken = encryptJwe(PLAINTEXT, ring.current)

  it.each([
    ['header', 0],
    ['IV', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('A256CBC-HS512: every single-bit change in the %s', (_label, part) => {
    let count = 0
    for (const mask of [0x01, 0x80]) {
      for (const tampered of bitFlips(cbcToken, part, mask)) {
        expect(decryptJwe(tampered, ring)).toBeNull()
        count++
      }
    }
    expect(count).toBeGreaterThanOrEqual(2 * 16)
  })

  it.each([
    ['header', 0],
    ['IV', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('A256GCM: every single-bit change in the %s', async (_label, part) => {
    const gcmToken = await joseGcm({ sub: 'gcm', name: 'tamper me' }, true)
    expect(decryptJwe(gcmToken, ring)).toBe('{"sub":"gcm","name":"tamper me"}')
    let count = 0
    for (const tampered of bitFlips(gcmToken, part, 0x01)) {
      expect(decryptJwe(tampered, ring)).toBeNull()
      count++
    }
    expect(count).toBeGreaterThanOrEqual(12)
  })

  it('every change of one base64url character, including stray low bits of the last one', () => {
    let count = 0
    for (let i = 0; i < cbcToken.length; i++) {
      const char = cbcToken[i] ?? ''
      if (char === '.') continue
      // Next character in the alphabet: for the last character of a part this may only toggle
      // the unused low bits, which a lenient decoder would ignore.
      const replacement = ALPHABET[(ALPHABET.indexOf(char) + 1) % 64] ?? 'A'
      const tampered = cbcToken.slice(0, i) + replacement + cbcToken.slice(i + 1)
      expect(decryptJwe(tampered, ring)).toBeNull()
      count++
    }
    expect(count).toBe(cbcToken.length - 4)
  })

  it('non-canonical base64url that decodes to the same bytes', () => {
    const [header, , iv, ciphertext, tag] = cbcToken.split('.')
    // 43-char tag: the last character carries 2 unused bits; set one of them.
    const lastTag = ALPHABET.indexOf(tag?.slice(-1) ?? '')
    const strayTag = `${tag?.slice(0, -1)}${ALPHABET[lastTag | 1]}`
    expect(Buffer.from(strayTag, 'base64url')).toEqual(Buffer.from(tag ?? '', 'base64url'))
    expect(decryptJwe([header, '', iv, ciphertext, strayTag].join('.'), ring)).toBeNull()
    // Padding, standard-alphabet characters and whitespace are not base64url.
    expect(decryptJwe([header, '', `${iv}==`, ciphertext, tag].join('.'), ring)).toBeNull()
    expect(decryptJwe([header, '', iv, `${ciphertext}=`, tag].join('.'), ring)).toBeNull()
    // Node's decoder skips characters outside the alphabet, so these decode to the same bytes.
    for (const junk of ['    ', '\n\n\n\n', '****', '====']) {
      const spliced = `${ciphertext?.slice(0, 8)}${junk}${ciphertext?.slice(8)}`
      if (junk !== '====') expect(Buffer.from(spliced, 'base64url')).toEqual(Buffer.from(ciphertext ?? '', 'base64url'))
      expect(decryptJwe([header, '', iv, spliced, tag].join('.'), ring)).toBeNull()
    }
  })

  it('the standard base64 alphabet, which Node decodes to the same bytes', () => {
    // A ciphertext of ~150 characters almost always has a '-' or '_'; draw until one does.
    let token = cbcToken
    while (!/[-_]/.test(token.split('.')[3] ?? '')) token = encryptJwe(PLAINTEXT, ring.current)
    const parts = token.split('.')
    const standard = (parts[3] ?? '').replace(/-/g, '+').replace(/_/g, '/')
    expect(Buffer.from(standard, 'base64url')).toEqual(Buffer.from(parts[3] ?? '', 'base64url'))
    expect(decryptJwe(token, ring)).toBe(PLAINTEXT)
    expect(decryptJwe([parts[0], '', parts[2], standard, parts[4]].join('.'), ring)).toBeNull()
  })

  it('a character past ASCII whose low byte is the alphabet\'s, which Node decodes to the same bytes', () => {
    // Node's decoder reads a two-byte string's characters by their low byte: `Ł` (U+0141) as `A`.
    const parts = cbcToken.split('.')
    for (const index of [2, 3, 4]) {
      const part = parts[index] ?? ''
      for (const at of [0, 7, part.length - 1]) {
        const twin = String.fromCharCode(0x100 + part.charCodeAt(at))
        const spliced = [...parts]
        spliced[index] = part.slice(0, at) + twin + part.slice(at + 1)
        expect(Buffer.from(spliced[index] ?? '', 'base64url')).toEqual(Buffer.from(part, 'base64url'))
        expect(decryptJwe(spliced.join('.'), ring)).toBeNull()
        // One from U+0080 to U+00FF keeps the string one byte a character; the decoder skips it.
        for (const latin1 of ['\u00ff', '\u00e9\u00e9']) {
          spliced[index] = part.slice(0, at) + latin1 + part.slice(at + 1)
          expect(decryptJwe(spliced.join('.'), ring)).toBeNull()
          spliced[index] = part.slice(0, at) + latin1 + part.slice(at)
          expect(decryptJwe(spliced.join('.'), ring)).toBeNull()
        }
      }
    }
  })

  it('every truncation, and trailing garbage', () => {
    for (let length = 0; length < cbcToken.length; length++) {
      expect(decryptJwe(cbcToken.slice(0, length), ring)).toBeNull()
    }
    expect(decryptJwe(`${cbcToken}A`, ring)).toBeNull()
    expect(decryptJwe(`${cbcToken}.`, ring)).toBeNull()
    expect(decryptJwe(`.${cbcToken}`, ring)).toBeNull()
  })

  it('a wrong number of parts', () => {
    const parts = cbcToken.split('.')
    expect(decryptJwe(parts.slice(0, 4).join('.'), ring)).toBeNull()
    expect(decryptJwe([...parts, parts[4]].join('.'), ring)).toBeNull()
    expect(decryptJwe([parts[0], parts[2], parts[3], parts[4]].join('.'), ring)).toBeNull()
    expect(decryptJwe('....', ring)).toBeNull()
    expect(decryptJwe('.....', ring)).toBeNull()
  })

  it('an A256GCM token of an empty plaintext without its (empty) ciphertext part', () => {
    // The IV and tag have fixed lengths, so a reader that located the parts by them alone would
    // find a ciphertext part here, the IV's dot and the tag's being one.
    const iv = Buffer.alloc(12, 3)
    const header = b64(JSON.stringify({ alg: 'dir', enc: 'A256GCM' }))
    const encrypt = createCipheriv('aes-256-gcm', gcmKey, iv).setAAD(Buffer.from(header))
    const sealed = Buffer.concat([encrypt.update(''), encrypt.final()])
    const tag = b64(encrypt.getAuthTag())
    expect(decryptJwe(`${header}..${b64(iv)}.${b64(sealed)}.${tag}`, ring)).toBe('')
    expect(decryptJwe(`${header}..${b64(iv)}.${tag}`, ring)).toBeNull()
  })

  it('a non-empty encrypted key', () => {
    const parts = cbcToken.split('.')
    parts[1] = 'AAAA'
    expect(decryptJwe(parts.join('.'), ring)).toBeNull()
  })

  it('accepts the test sealer with the real header (so the rejections below are about policy)', () => {
    const header = { alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid }
    expect(decryptJwe(sealCbc(header, PLAINTEXT), ring)).toBe(PLAINTEXT)
    expect(decryptJwe(sealCbc({ alg: 'dir', enc: 'A256CBC-HS512' }, PLAINTEXT), ring)).toBe(PLAINTEXT)
  })

  it.each([
    ['alg A256KW', { alg: 'A256KW', enc: 'A256CBC-HS512' }],
    ['alg none', { alg: 'none', enc: 'A256CBC-HS512' }],
    ['alg RSA-OAEP', { alg: 'RSA-OAEP', enc: 'A256CBC-HS512' }],
    ['alg dir in the wrong case', { alg: 'DIR', enc: 'A256CBC-HS512' }],
    ['no alg', { enc: 'A256CBC-HS512' }],
    ['enc A128CBC-HS256', { alg: 'dir', enc: 'A128CBC-HS256' }],
    ['enc A256GCM on a CBC token', { alg: 'dir', enc: 'A256GCM' }],
    ['no enc', { alg: 'dir' }],
    ['zip DEF', { alg: 'dir', enc: 'A256CBC-HS512', zip: 'DEF' }],
    ['crit', { alg: 'dir', enc: 'A256CBC-HS512', crit: ['exp'], exp: 1 }],
    ['empty crit', { alg: 'dir', enc: 'A256CBC-HS512', crit: [] }],
    ['kid of another type', { alg: 'dir', enc: 'A256CBC-HS512', kid: 42 }],
    ['kid of no key', { alg: 'dir', enc: 'A256CBC-HS512', kid: 'no-such-key' }],
  ])('an authenticated token with %s', (_label, header) => {
    expect(decryptJwe(sealCbc(header, PLAINTEXT), ring)).toBeNull()
  })

  it.each([
    ['an array', '[{"alg":"dir","enc":"A256CBC-HS512"}]'],
    ['null', 'null'],
    ['a string', '"dir"'],
    ['not JSON', '{alg:dir}'],
    ['empty', ''],
  ])('an authenticated token whose header is %s', (_label, header) => {
    expect(decryptJwe(sealCbc(header, PLAINTEXT), ring)).toBeNull()
  })

  it('an authenticated token whose header bytes are not UTF-8', () => {
    const prefix = Buffer.from('{"alg":"dir","enc":"A256CBC-HS512","x":"')
    const suffix = Buffer.from('"}')
    const bad = Buffer.concat([prefix, Buffer.from([0xc3, 0x28]), suffix])
    const good = Buffer.concat([prefix, Buffer.from('é'), suffix])
    expect(decryptJwe(sealCbc(bad, PLAINTEXT), ring)).toBeNull()
    expect(decryptJwe(sealCbc(good, PLAINTEXT), ring)).toBe(PLAINTEXT)
  })

  it('an authenticated token whose padding is not PKCS#7, whatever the padding byte', () => {
    const text = Buffer.from('{"sub":"padded"}') // 16 bytes: one block, then the padding block
    const withLastBlock = (last: number[]) => Buffer.concat([text, Buffer.from(last)])
    // The control: the valid padding of a whole block opens.
    expect(decryptJwe(sealCbcBlocks(withLastBlock(Array(16).fill(16))), ring)).toBe('{"sub":"padded"}')
    expect(decryptJwe(sealCbcBlocks(Buffer.concat([text.subarray(0, 14), Buffer.from([2, 2])])), ring)).toBe('{"sub":"padded')
    for (const bad of [0, 17, 255]) expect(decryptJwe(sealCbcBlocks(withLastBlock(Array(16).fill(bad))), ring)).toBeNull()
    // The right last byte, a wrong byte before it.
    expect(decryptJwe(sealCbcBlocks(withLastBlock([...Array(14).fill(16), 15, 16])), ring)).toBeNull()
    expect(decryptJwe(sealCbcBlocks(withLastBlock([...Array(13).fill(0), 3, 2, 3])), ring)).toBeNull()
  })

  it('an authenticated token whose IV is not 16 bytes (A256CBC-HS512) or 12 bytes (A256GCM)', async () => {
    // The ciphertext made with the 15 bytes and a zero: a decryption that took the short IV as it
    // comes (its missing byte as zero) would open it.
    const short = Buffer.alloc(15, 5)
    const cipher = createCipheriv('aes-256-cbc', cbcKey.subarray(32), Buffer.concat([short, Buffer.alloc(1)]))
    const ciphertext = Buffer.concat([cipher.update(PLAINTEXT), cipher.final()])
    expect(decryptJwe(sealCbcRaw(Buffer.concat([short, Buffer.alloc(1)]), ciphertext), ring)).toBe(PLAINTEXT)
    expect(decryptJwe(sealCbcRaw(short, ciphertext), ring)).toBeNull()
    // GCM takes IVs of any length; a JWE's is 96 bits.
    const gcm = (ivBytes: number) => {
      const iv = Buffer.alloc(ivBytes, 3)
      const header = b64(JSON.stringify({ alg: 'dir', enc: 'A256GCM' }))
      const encrypt = createCipheriv('aes-256-gcm', gcmKey, iv).setAAD(Buffer.from(header))
      const sealed = Buffer.concat([encrypt.update(PLAINTEXT), encrypt.final()])
      return `${header}..${b64(iv)}.${b64(sealed)}.${b64(encrypt.getAuthTag())}`
    }
    expect(decryptJwe(gcm(12), ring)).toBe(PLAINTEXT)
    expect(decryptJwe(gcm(16), ring)).toBeNull()
  })

  it('an authenticated token with an empty ciphertext: no plaintext, not an empty one', () => {
    expect(decryptJwe(sealCbcRaw(Buffer.alloc(16, 1), Buffer.alloc(0)), ring)).toBeNull()
  })

  it('opens plaintexts of every length across two blocks, sealed by jose, one after another', async () => {
    // CBC chains each block on the one before: a decipher that carried anything between tokens
    // would garble the next one.
    for (let length = 0; length <= 40; length++) {
      const plaintext = `"${'x'.repeat(length)}"`
      const token = await new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512' }).encrypt(cbcKey)
      expect(decryptJwe(token, ring)).toBe(plaintext)
    }
  })

  it('opens tokens too long for the key\'s block and shorter ones after them, and still writes tokens jose reads', async () => {
    // The hash's input is written after the pad in the key's own block (keys.ts); a longer one is
    // hashed after the pad from a buffer of its own. Both sides of that boundary, in turn: neither
    // may disturb the pad or leave a stale message behind for the next token.
    const room = ring.current.cbc!.innerBlock.length
    const header = base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512' }))
    // The message: header, 16-byte IV, ciphertext (the JSON string's bytes padded to whole blocks), 8-byte length.
    const jsonLength = (ciphertext: number) => ciphertext - 1 - 2
    const lengths = []
    for (let ciphertext = room - 128 - header.length - 24 - 64; ciphertext <= room - 128 - header.length - 24 + 64; ciphertext += 16) lengths.push(jsonLength(ciphertext))
    for (const length of lengths) {
      const long = `"${'y'.repeat(length)}"`
      const token = await new CompactEncrypt(new TextEncoder().encode(long)).setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512' }).encrypt(cbcKey)
      expect(decryptJwe(token, ring)).toBe(long)
      // Another tag: its second-to-last character changed (the last one carries stray bits).
      expect(decryptJwe(token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1), ring)).toBeNull()
      expect(decryptJwe(encryptJwe(PLAINTEXT, ring.current), ring)).toBe(PLAINTEXT)
      expect(new TextDecoder().decode((await compactDecrypt(encryptJwe(long, ring.current), cbcKey)).plaintext)).toBe(long)
    }
  })

  it('an authenticated token whose plaintext is not UTF-8', () => {
    const header = { alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid }
    expect(decryptJwe(sealCbc(header, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), ring)).toBeNull()
    expect(decryptJwe(sealCbc(header, Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), ring)).toBeNull() // UTF-16 surrogate
    expect(decryptJwe(sealCbc(header, Buffer.from('"ok ✓"')), ring)).toBe('"ok ✓"')
  })

  it('drops a leading byte order mark from the header, as jose does', async () => {
    const token = sealCbc(Buffer.from('\ufeff{"alg":"dir","enc":"A256CBC-HS512"}'), PLAINTEXT)
    expect(decryptJwe(token, ring)).toBe(PLAINTEXT)
    expect(new TextDecoder().decode((await compactDecrypt(token, cbcKey)).plaintext)).toBe(PLAINTEXT)
  })

  it('drops a leading byte order mark from the plaintext, as jose does', async () => {
    const header = { alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid }
    const token = sealCbc(header, Buffer.from('\ufeff{"sub":"bom"}'))
    expect(decryptJwe(token, ring)).toBe('{"sub":"bom"}')
    expect((await jwtDecrypt(token, cbcKey)).payload).toEqual({ sub: 'bom' })
  })

  it.each([
    ['empty string', ''],
    ['garbage', 'not a token at all'],
    ['dots only', '.....'],
    ['a JWS', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl'],
    ['unicode', 'ëÿ.ëÿ.ëÿ.ëÿ.ëÿ'],
    ['a huge part', `${'A'.repeat(100_000)}....`],
  ])('%s', (_label, token) => {
    expect(decryptJwe(token, ring)).toBeNull()
  })

  it('non-string input', () => {
    for (const value of [undefined, null, 42, {}, ['a', 'b'], Buffer.from('x')]) {
      expect(decryptJwe(value as unknown as string, ring)).toBeNull()
    }
  })

  it('a token jose wrote with zip: DEF, even though jose itself would inflate it', async () => {
    const zipped = await new CompactEncrypt(new TextEncoder().encode(PLAINTEXT))
      .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', zip: 'DEF' })
      .encrypt(cbcKey)
    expect(new TextDecoder().decode((await compactDecrypt(zipped, cbcKey)).plaintext)).toBe(PLAINTEXT)
    expect(decryptJwe(zipped, ring)).toBeNull()
  })
})

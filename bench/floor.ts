/**
 * The floor: RFC 7518 §5.2.2.2 and nothing else, inline. No format checks, no header parsing, no
 * claim checks, no cache: what any reader of an A256CBC-HS512 session cookie must at least do
 * (HMAC-SHA-512 and compare, AES-256-CBC, JSON.parse), done with node:crypto's cheapest calls, the
 * ones Portcullis uses (src/session/jwe.ts): two one-shot `hash` calls over HMAC pads made once,
 * and one AES block decipher made once, chained into CBC here, the hashes' input written after the
 * pads in two buffers made once (as Portcullis's keys keep them). The in-process bench (session.ts)
 * and the HTTP bench (the `/floor` route of http-apps.ts) measure it; nothing that reads these
 * cookies can be much faster.
 *
 * The usual way (a createHmac and a createDecipheriv per token) costs little more in a loop but
 * much more in a loaded HTTP server, where every native crypto handle must also be finalised by
 * the garbage collector: `BENCH_FLOOR=objects` measures the floor that way instead.
 */
import { createDecipheriv, createHmac, createSecretKey, hash, hkdfSync, timingSafeEqual } from 'node:crypto'

export type FloorDecrypt = (token: string) => unknown

/** The floor for the session cookies of `secret` under the cookie name `salt`. */
export function floorDecryptFor(secret: string, salt: string): FloorDecrypt {
  const cek = Buffer.from(hkdfSync('sha256', secret, salt, `Auth.js Generated Encryption Key (${salt})`, 64))
  // KeyObjects, as Portcullis keeps its keys: from Node 24 on, a raw Buffer key costs about 30 µs
  // more per createHmac or createDecipheriv call, which would lift the floor above the codec.
  const macKey = createSecretKey(cek.subarray(0, 32))
  const encKey = createSecretKey(cek.subarray(32))
  if (process.env.BENCH_FLOOR === 'objects') {
    return (token) => {
      const [header = '', , iv64 = '', ct64 = '', tag64 = ''] = token.split('.')
      const iv = Buffer.from(iv64, 'base64url')
      const ciphertext = Buffer.from(ct64, 'base64url')
      const al = Buffer.alloc(8)
      al.writeUInt32BE(header.length * 8, 4)
      const mac = createHmac('sha512', macKey).update(header, 'latin1').update(iv).update(ciphertext).update(al).digest()
      if (!timingSafeEqual(mac.subarray(0, 32), Buffer.from(tag64, 'base64url'))) throw new Error('tag')
      const decipher = createDecipheriv('aes-256-cbc', encKey, iv)
      return JSON.parse(Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8'))
    }
  }
  // The pads, each at the start of a buffer with room for the rest of its hash's input (the bench's
  // cookies fit in 8 KB).
  const inner = Buffer.alloc(128 + 8 * 1024)
  const outer = Buffer.alloc(128 + 64)
  inner.fill(0x36, 0, 128)
  outer.fill(0x5c, 0, 128)
  for (let i = 0; i < 32; i++) {
    inner[i]! ^= cek[i]!
    outer[i]! ^= cek[i]!
  }
  const blocks = createDecipheriv('aes-256-ecb', encKey, null).setAutoPadding(false)
  return (token) => {
    const [header = '', , iv64 = '', ct64 = '', tag64 = ''] = token.split('.')
    const iv = Buffer.from(iv64, 'base64url')
    const ciphertext = Buffer.from(ct64, 'base64url')
    let offset = 128 + inner.write(header, 128, 'latin1')
    offset += iv.copy(inner, offset)
    offset += ciphertext.copy(inner, offset)
    inner.writeUInt32BE(0, offset)
    inner.writeUInt32BE(header.length * 8, offset + 4)
    hash('sha512', inner.subarray(0, offset + 8), 'buffer').copy(outer, 128)
    if (!timingSafeEqual(hash('sha512', outer, 'buffer').subarray(0, 32), Buffer.from(tag64, 'base64url'))) throw new Error('tag')
    const plain = blocks.update(ciphertext)
    for (let i = 0; i < 16; i++) plain[i]! ^= iv[i]!
    for (let i = 16; i < plain.length; i++) plain[i]! ^= ciphertext[i - 16]!
    return JSON.parse(plain.toString('utf8', 0, plain.length - plain[plain.length - 1]!))
  }
}

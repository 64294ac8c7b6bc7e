/**
 * The authorization server's keys, derived from the app's secrets (`secret` / `AUTH_SECRET`, newest
 * first) so that every process of the app has the same ones with nothing more to store or share:
 * per secret, an ES256 (P-256) signing key for ID tokens and JWT access tokens, and a key for
 * oidc-provider's signed cookies. The newest secret's key signs; every secret's public key stays in
 * the JWKS, so tokens signed before a rotation verify until they expire (docs/authorization-server.md).
 *
 * A P-256 private key is a number in [1, n-1]: HKDF gives 48 bytes, reduced mod n-1, plus 1 (FIPS 186-5
 * A.2.1's method, bias below 2^-128). The public point comes from node:crypto's ECDH.
 */
import { createECDH, createHash, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto'

// The order n of P-256's base point.
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')

/** A signing key as a private JWK (oidc-provider's `jwks`), and its public half for the bearer read. */
export interface SigningKey {
  readonly jwk: Readonly<Record<string, string>>
  readonly kid: string
  readonly publicKey: KeyObject
}

/** The keys of the authorization server for `secrets`, newest first. */
export interface ServerKeys {
  readonly signing: readonly SigningKey[]
  /** oidc-provider's cookie keys (`cookies.keys`): the first signs, all verify. */
  readonly cookieKeys: readonly string[]
}

function derive(secret: string, info: string, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'portcullis authorization server', info, length))
}

/** The P-256 signing key derived from one secret. */
export function signingKeyOf(secret: string): SigningKey {
  const wide = BigInt(`0x${derive(secret, 'ES256 signing key', 48).toString('hex')}`)
  const d = Buffer.from(((wide % (P256_ORDER - 1n)) + 1n).toString(16).padStart(64, '0'), 'hex')
  const ecdh = createECDH('prime256v1')
  ecdh.setPrivateKey(d)
  const point = ecdh.getPublicKey()
  const x = point.subarray(1, 33).toString('base64url')
  const y = point.subarray(33, 65).toString('base64url')
  // RFC 7638 thumbprint as the key id: stable, and it names the key without revealing anything.
  const kid = createHash('sha256').update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y })).digest('base64url')
  const jwk = Object.freeze({ kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url'), kid, alg: 'ES256', use: 'sig' })
  return { jwk, kid, publicKey: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' }) }
}

/** Every key for the app's secrets, newest first. */
export function serverKeys(secrets: readonly string[]): ServerKeys {
  return Object.freeze({
    signing: Object.freeze(secrets.map(signingKeyOf)),
    cookieKeys: Object.freeze(secrets.map((secret) => derive(secret, 'cookie key', 32).toString('base64url'))),
  })
}

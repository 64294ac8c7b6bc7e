import { describe, it, expect } from '@jest/globals'
import { hkdfSync } from 'node:crypto'
import { EncryptJWT, jwtDecrypt } from 'jose'
import { decryptJwe, encryptJwe } from '../../src/session/jwe.js'
import { deriveKeyRing } from '../../src/session/keys.js'
import { CLOCK_TOLERANCE, openSessionToken, sealSessionToken } from '../../src/session/token.js'

const SECRET = 'token-test-secret-with-enough-entropy-0123456789'
const SALT = 'authjs.session-token'
const ring = deriveKeyRing([SECRET], SALT)
const cbcKey = new Uint8Array(hkdfSync('sha256', SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 64))
const NOW = 1_700_000_000
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A token whose plaintext is exactly `json`, bypassing sealSessionToken's claim handling. */
const sealRaw = (json: string): string => encryptJwe(json, ring.current)
const sealClaims = (claims: Record<string, unknown>): string => sealRaw(JSON.stringify(claims))

/** What jose's jwtDecrypt says about the same token at the same instant, as Auth.js calls it. */
async function joseAccepts(token: string, now: number): Promise<boolean> {
  try {
    await jwtDecrypt(token, cbcKey, { clockTolerance: 15, currentDate: new Date(now * 1000) })
    return true
  } catch {
    return false
  }
}

describe('sealSessionToken', () => {
  it('adds iat, exp and a fresh UUID jti after the payload claims', () => {
    const payload = { name: 'Ada', email: 'ada@example.com', picture: null, sub: 'user-1' }
    const token = sealSessionToken(payload, ring.current, 3600, NOW)
    const plaintext = decryptJwe(token, ring) ?? ''
    const claims = JSON.parse(plaintext) as Record<string, unknown>
    expect(Object.keys(claims)).toEqual(['name', 'email', 'picture', 'sub', 'iat', 'exp', 'jti'])
    expect(claims).toMatchObject({ ...payload, iat: NOW, exp: NOW + 3600 })
    expect(claims['jti']).toMatch(UUID_V4)
    const again = JSON.parse(decryptJwe(sealSessionToken(payload, ring.current, 3600, NOW), ring) ?? '{}') as Record<string, unknown>
    expect(again['jti']).not.toBe(claims['jti'])
    expect(payload).toEqual({ name: 'Ada', email: 'ada@example.com', picture: null, sub: 'user-1' })
  })

  it('overwrites existing iat/exp/jti in place, byte for byte like jose EncryptJWT', async () => {
    const payload = { iat: 1, name: 'Ada', jti: 'old', exp: 2, sub: 'user-1' }
    const ours = decryptJwe(sealSessionToken(payload, ring.current, 60, NOW), ring) ?? ''
    const jti = (JSON.parse(ours) as { jti: string }).jti
    const joseToken = await new EncryptJWT(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid: ring.current.kid })
      .setIssuedAt(NOW)
      .setExpirationTime(NOW + 60)
      .setJti(jti)
      .encrypt(cbcKey)
    expect(ours).toBe(decryptJwe(joseToken, ring))
    expect(ours).toBe(`{"iat":${NOW},"name":"Ada","jti":"${jti}","exp":${NOW + 60},"sub":"user-1"}`)
  })

  it('throws a TypeError for a payload that is not a plain object or a non-finite time', () => {
    for (const payload of [null, [], 'x', 1, new Date()]) {
      expect(() => sealSessionToken(payload as never, ring.current, 60, NOW)).toThrow(new TypeError('sealSessionToken: the payload must be a plain object'))
    }
    expect(() => sealSessionToken({}, ring.current, Number.NaN, NOW)).toThrow(new TypeError('sealSessionToken: `maxAge` must be a finite number of seconds'))
    expect(() => sealSessionToken({}, ring.current, 60, Number.POSITIVE_INFINITY)).toThrow(new TypeError('sealSessionToken: `now` must be a finite number of seconds'))
    // A payload without Object's prototype is still a plain object.
    expect(typeof sealSessionToken(Object.assign(Object.create(null), { sub: '1' }), ring.current, 60, NOW)).toBe('string')
  })
})

describe('openSessionToken', () => {
  it('returns the claims and the plaintext of a valid token', () => {
    const token = sealSessionToken({ sub: 'user-1' }, ring.current, 60, NOW)
    const opened = openSessionToken(token, ring, NOW)
    expect(opened?.payload).toMatchObject({ sub: 'user-1', iat: NOW, exp: NOW + 60 })
    expect(opened?.plaintext).toBe(decryptJwe(token, ring))
  })

  it('has the tolerance Auth.js gives jose', () => {
    expect(CLOCK_TOLERANCE).toBe(15)
  })

  // jose: expired when exp <= now - tolerance, i.e. exp is valid while now < exp + 15.
  it.each([
    ['exp 14 s ago', NOW - 14, true],
    ['exp exactly 15 s ago', NOW - 15, false],
    ['exp 16 s ago', NOW - 16, false],
    ['exp now', NOW, true],
    ['exp in the future', NOW + 3600, true],
  ])('%s', async (_label, exp, valid) => {
    const token = sealClaims({ sub: 'u', exp })
    expect(openSessionToken(token, ring, NOW) !== null).toBe(valid)
    expect(await joseAccepts(token, NOW)).toBe(valid)
  })

  // jose: rejected when nbf > now + tolerance.
  it.each([
    ['nbf 15 s ahead', NOW + 15, true],
    ['nbf 16 s ahead', NOW + 16, false],
    ['nbf now', NOW, true],
    ['nbf in the past', NOW - 3600, true],
  ])('%s', async (_label, nbf, valid) => {
    const token = sealClaims({ sub: 'u', nbf })
    expect(openSessionToken(token, ring, NOW) !== null).toBe(valid)
    expect(await joseAccepts(token, NOW)).toBe(valid)
  })

  it('accepts an iat in the future, as jose does without maxTokenAge', async () => {
    const token = sealClaims({ sub: 'u', iat: NOW + 86_400 })
    expect(openSessionToken(token, ring, NOW)?.payload.iat).toBe(NOW + 86_400)
    expect(await joseAccepts(token, NOW)).toBe(true)
  })

  it.each([
    ['exp as a string', { exp: String(NOW + 60) }],
    ['exp null', { exp: null }],
    ['nbf as a string', { nbf: String(NOW) }],
    ['nbf true', { nbf: true }],
    ['iat as a string', { iat: String(NOW) }],
    ['iat as an object', { iat: {} }],
  ])('rejects %s', async (_label, claims) => {
    const token = sealClaims({ sub: 'u', ...claims })
    expect(openSessionToken(token, ring, NOW)).toBeNull()
    expect(await joseAccepts(token, NOW)).toBe(false)
  })

  it('accepts a token without any time claim', async () => {
    const token = sealClaims({ sub: 'u' })
    expect(openSessionToken(token, ring, NOW)?.payload).toEqual({ sub: 'u' })
    expect(await joseAccepts(token, NOW)).toBe(true)
  })

  it('sees a token sealed with maxAge expire 15 s after exp', () => {
    const token = sealSessionToken({ sub: 'u' }, ring.current, 60, NOW)
    expect(openSessionToken(token, ring, NOW + 60 + 14)).not.toBeNull()
    expect(openSessionToken(token, ring, NOW + 60 + 15)).toBeNull()
  })

  it.each([
    ['an array', '[{"sub":"u"}]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"sub"'],
    ['true', 'true'],
    ['invalid JSON', '{"sub":'],
    ['empty', ''],
  ])('rejects a payload that is %s', async (_label, json) => {
    const token = sealRaw(json)
    expect(decryptJwe(token, ring)).toBe(json)
    expect(openSessionToken(token, ring, NOW)).toBeNull()
    expect(await joseAccepts(token, NOW)).toBe(false)
  })

  it('rejects what decryptJwe rejects', () => {
    expect(openSessionToken('', ring, NOW)).toBeNull()
    expect(openSessionToken('a.b.c.d.e', ring, NOW)).toBeNull()
    const token = sealSessionToken({ sub: 'u' }, ring.current, 60, NOW)
    expect(openSessionToken(token, deriveKeyRing(['some-other-secret'], SALT), NOW)).toBeNull()
  })
})

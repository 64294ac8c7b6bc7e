import { MissingSecretError } from 'portcullis'
import { describe, it, expect, afterEach } from '@jest/globals'
import { encode as authjsEncode, decode as authjsDecode } from '@auth/core/jwt'
import { JWTSessionError, decode, encode, getToken } from '../../src/jwt.js'

const SECRET = 'interop-secret-with-enough-entropy-0123456789'
const OLD_SECRET = 'interop-old-secret-9876543210-abcdefghijklmn'
const COOKIE = 'authjs.session-token'
const SECURE_COOKIE = '__Secure-authjs.session-token'
/** Auth.js splits cookies at 4096 - 160 characters (lib/utils/cookie.js). */
const AUTHJS_CHUNK_SIZE = 3936

const claims = { name: 'Ada Lovelace', email: 'ada@example.com', picture: 'https://example.com/ada.png', sub: 'user-1' }
const nowSeconds = (): number => Math.floor(Date.now() / 1000)

function chunk(token: string): string[] {
  const chunks: string[] = []
  for (let i = 0; i < token.length; i += AUTHJS_CHUNK_SIZE) chunks.push(token.slice(i, i + AUTHJS_CHUNK_SIZE))
  return chunks
}

describe.each([
  ['plain cookie name', COOKIE, false],
  ['__Secure- cookie name', SECURE_COOKIE, true],
])('Auth.js interop, salt = %s', (_label, salt, secureCookie) => {
  it('decodes what @auth/core/jwt encodes', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt, maxAge: 3600 })
    const payload = await decode({ token, secret: SECRET, salt })
    expect(payload).toMatchObject(claims)
    expect(payload?.exp).toBe((payload?.iat ?? 0) + 3600)
    expect(Math.abs((payload?.iat ?? 0) - nowSeconds())).toBeLessThanOrEqual(2)
    expect(payload?.jti).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('encodes what @auth/core/jwt decodes, with the same header and claim order', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt, maxAge: 3600 })
    const payload = await authjsDecode({ token, secret: SECRET, salt })
    expect(payload).toMatchObject(claims)
    expect(Object.keys(payload ?? {})).toEqual(['name', 'email', 'picture', 'sub', 'iat', 'exp', 'jti'])
    expect(payload?.exp).toBe((payload?.iat ?? 0) + 3600)
    const reference = await authjsEncode({ token: claims, secret: SECRET, salt })
    expect(token.split('.')[0]).toBe(reference.split('.')[0])
  })

  it('getToken reads an Auth.js session cookie', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt })
    const req = { headers: { cookie: `other=1; ${salt}=${token}; theme=dark` } }
    expect(await getToken({ req, secret: SECRET, secureCookie })).toMatchObject(claims)
    expect(await getToken({ req, secret: SECRET, secureCookie, raw: true })).toBe(token)
    // The other cookie name is not read.
    expect(await getToken({ req, secret: SECRET, secureCookie: !secureCookie })).toBeNull()
  })

  it('getToken reads a chunked Auth.js session cookie, chunks in any order, from a Headers object', async () => {
    const big = { ...claims, groups: Array.from({ length: 200 }, (_, i) => `group-${i}-${'x'.repeat(20)}`) }
    const token = await authjsEncode({ token: big, secret: SECRET, salt })
    const chunks = chunk(token)
    expect(chunks.length).toBeGreaterThanOrEqual(2)
    const cookieHeader = chunks
      .map((value, i) => `${salt}.${i}=${value}`)
      .reverse()
      .join('; ')
    const req = { headers: new Headers({ cookie: cookieHeader }) }
    expect(await getToken({ req, secret: SECRET, secureCookie })).toMatchObject(big)
    expect(await getToken({ req, secret: SECRET, secureCookie, raw: true })).toBe(token)
    // A missing chunk means no session.
    const gap = { headers: { cookie: chunks.map((v, i) => (i === 1 ? '' : `${salt}.${i}=${v}`)).join('; ') } }
    expect(await getToken({ req: gap, secret: SECRET, secureCookie })).toBeNull()
  })

  it('rotates secrets both ways: a list seals with its first entry and opens with any', async () => {
    const oldToken = await authjsEncode({ token: claims, secret: OLD_SECRET, salt })
    expect(await decode({ token: oldToken, secret: [SECRET, OLD_SECRET], salt })).toMatchObject(claims)
    await expect(decode({ token: oldToken, secret: SECRET, salt })).rejects.toThrow(JWTSessionError)

    const ours = await encode({ token: claims, secret: [SECRET, OLD_SECRET], salt })
    expect(await authjsDecode({ token: ours, secret: SECRET, salt })).toMatchObject(claims)
    expect(await authjsDecode({ token: ours, secret: [OLD_SECRET, SECRET], salt })).toMatchObject(claims)
    await expect(authjsDecode({ token: ours, secret: OLD_SECRET, salt })).rejects.toThrow()
  })
})

describe('decode', () => {
  it('returns null for an empty or missing token', async () => {
    expect(await decode({ token: '', secret: SECRET, salt: COOKIE })).toBeNull()
    expect(await decode({ secret: SECRET, salt: COOKIE })).toBeNull()
  })

  it('rejects an invalid token with a JWTSessionError, as Auth.js reports it', async () => {
    const error = await decode({ token: 'not-a-token', secret: SECRET, salt: COOKIE }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(JWTSessionError)
    expect((error as Error).name).toBe('JWTSessionError')
  })

  it('rejects a token sealed for the other cookie name', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt: SECURE_COOKIE })
    await expect(decode({ token, secret: SECRET, salt: COOKIE })).rejects.toThrow(JWTSessionError)
  })

  it('rejects an expired token both ways', async () => {
    const theirs = await authjsEncode({ token: claims, secret: SECRET, salt: COOKIE, maxAge: -60 })
    await expect(decode({ token: theirs, secret: SECRET, salt: COOKIE })).rejects.toThrow(JWTSessionError)
    const ours = await encode({ token: claims, secret: SECRET, salt: COOKIE, maxAge: -60 })
    await expect(authjsDecode({ token: ours, secret: SECRET, salt: COOKIE })).rejects.toThrow(/exp/)
  })

  it('encodes an empty payload by default', async () => {
    const token = await encode({ secret: SECRET, salt: COOKIE })
    const payload = await authjsDecode({ token, secret: SECRET, salt: COOKIE })
    expect(Object.keys(payload ?? {})).toEqual(['iat', 'exp', 'jti'])
    expect(payload?.exp).toBe((payload?.iat ?? 0) + 30 * 24 * 60 * 60)
  })
})

describe('getToken', () => {
  const savedEnv = { ...process.env }
  afterEach(() => {
    for (const name of ['AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3']) {
      if (savedEnv[name] === undefined) delete process.env[name]
      else process.env[name] = savedEnv[name]
    }
  })

  it('falls back to an Authorization: Bearer token, percent-decoded', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt: COOKIE })
    const req = { headers: { authorization: `Bearer ${encodeURIComponent(token)}` } }
    expect(await getToken({ req, secret: SECRET })).toMatchObject(claims)
    expect(await getToken({ req: { headers: { authorization: 'Bearer %E0%A4%A' } }, secret: SECRET })).toBeNull()
    expect(await getToken({ req: { headers: { authorization: `Basic ${token}` } }, secret: SECRET })).toBeNull()
  })

  it('prefers the cookie over the Authorization header', async () => {
    const cookieToken = await encode({ token: { sub: 'from-cookie' }, secret: SECRET, salt: COOKIE })
    const bearerToken = await encode({ token: { sub: 'from-header' }, secret: SECRET, salt: COOKIE })
    const req = { headers: { cookie: `${COOKIE}=${cookieToken}`, authorization: `Bearer ${bearerToken}` } }
    expect((await getToken({ req, secret: SECRET }))?.sub).toBe('from-cookie')
  })

  it('returns null without a token, and for an undecryptable one', async () => {
    expect(await getToken({ req: { headers: {} }, secret: SECRET })).toBeNull()
    expect(await getToken({ req: { headers: { cookie: `${COOKIE}=garbage` } }, secret: SECRET })).toBeNull()
    expect(await getToken({ req: { headers: { cookie: `${COOKIE}=` } }, secret: SECRET })).toBeNull()
  })

  it('reads the plain cookie when stale chunks sit next to it, as the router does', async () => {
    const token = await encode({ token: claims, secret: SECRET, salt: COOKIE })
    const req = { headers: { cookie: `${COOKIE}=${token}; ${COOKIE}.0=stale; ${COOKIE}.1=stale` } }
    expect(await getToken({ req, secret: SECRET })).toMatchObject(claims)
  })

  it('honours cookieName and salt', async () => {
    const token = await authjsEncode({ token: claims, secret: SECRET, salt: 'custom-salt' })
    const req = { headers: { cookie: `my-session=${token}` } }
    expect(await getToken({ req, secret: SECRET, cookieName: 'my-session', salt: 'custom-salt' })).toMatchObject(claims)
    expect(await getToken({ req, secret: SECRET, cookieName: 'my-session' })).toBeNull()
  })

  it('takes the secret from AUTH_SECRET and AUTH_SECRET_1..3', async () => {
    delete process.env['LEGACYAUTH_SECRET']
    process.env['AUTH_SECRET'] = SECRET
    process.env['AUTH_SECRET_1'] = OLD_SECRET
    for (const secret of [SECRET, OLD_SECRET]) {
      const token = await authjsEncode({ token: claims, secret, salt: COOKIE })
      expect(await getToken({ req: { headers: { cookie: `${COOKIE}=${token}` } } })).toMatchObject(claims)
    }
    const stranger = await authjsEncode({ token: claims, secret: 'not-configured-anywhere', salt: COOKIE })
    expect(await getToken({ req: { headers: { cookie: `${COOKIE}=${stranger}` } } })).toBeNull()
  })

  it('takes the secret from LEGACYAUTH_SECRET when AUTH_SECRET is unset', async () => {
    for (const name of ['AUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3']) delete process.env[name]
    process.env['LEGACYAUTH_SECRET'] = OLD_SECRET
    const token = await authjsEncode({ token: claims, secret: OLD_SECRET, salt: COOKIE })
    expect(await getToken({ req: { headers: { cookie: `${COOKIE}=${token}` } } })).toMatchObject(claims)
  })

  it('rejects with MissingSecretError when no secret is configured anywhere', async () => {
    for (const name of ['AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3']) {
      delete process.env[name]
    }
    const token = await encode({ token: claims, secret: SECRET, salt: COOKIE })
    await expect(getToken({ req: { headers: { cookie: `${COOKIE}=${token}` } } })).rejects.toBeInstanceOf(MissingSecretError)
    // Like Auth.js, raw needs no secret.
    expect(await getToken({ req: { headers: { cookie: `${COOKIE}=${token}` } }, raw: true })).toBe(token)
  })
})

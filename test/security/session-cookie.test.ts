/**
 * Attacks on the session cookie (DESIGN §4, STYLE "Errors"): a tampered, foreign, expired,
 * downgraded or unencrypted token is "no session", answered with 200 `null` and a cleared cookie,
 * never a 5xx, through both `auth(req, res)` and GET /api/auth/session.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { Response } from 'supertest'
import { encode } from 'portcullis/jwt'
import { OTHER_SECRET, SECRET, SESSION_COOKIE, USER, closeAll, getSession, isCleared, isSessionCookieName, me, sessionCookiesSet, setCookie, setCookies, signIn, startApp, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

const b64url = (value: string): string => Buffer.from(value).toString('base64url')
const fromB64url = (value: string): string => Buffer.from(value, 'base64url').toString('utf8')

/** `value` with the character at `index` replaced by another base64url character. */
function changeCharAt(value: string, index: number): string {
  const replacement = value[index] === 'A' ? 'B' : 'A'
  return value.slice(0, index) + replacement + value.slice(index + 1)
}

/** The token with one character of part `part` changed (a character added to the empty key part). */
function tamperPart(token: string, part: number): string {
  const parts = token.split('.')
  const value = parts[part]!
  parts[part] = value.length === 0 ? 'A' : changeCharAt(value, Math.floor(value.length / 2))
  return parts.join('.')
}

/** The token with its protected header re-encoded after `edit`; the other four parts are kept. */
function withHeader(token: string, edit: (header: Record<string, unknown>) => Record<string, unknown>): string {
  const [header, ...rest] = token.split('.')
  return [b64url(JSON.stringify(edit(JSON.parse(fromB64url(header!)) as Record<string, unknown>))), ...rest].join('.')
}

const sessionPair = (value: string): string => `${SESSION_COOKIE}=${value}`

function expectNoSession(res: Response): void {
  expect(res.status).toBe(200)
  expect(res.body).toBeNull()
  expect(sessionCookiesSet(res)).toEqual([])
}

/** 200 `null`, and the response tells the browser to drop the session cookie. */
function expectNoSessionAndCleared(res: Response): void {
  expectNoSession(res)
  expect(setCookie(res, SESSION_COOKIE)).toBeDefined()
  expect(isCleared(setCookie(res, SESSION_COOKIE))).toBe(true)
}

describe('session cookie attacks', () => {
  let app: SecurityApp
  let token: string

  beforeAll(async () => {
    app = await startApp()
    token = (await signIn(app)).sessionToken
    expect(token.split('.')).toHaveLength(5)
  })

  it('a genuine session cookie is accepted by /me and GET /api/auth/session (control)', async () => {
    for (const res of [await me(app, sessionPair(token)), await getSession(app, sessionPair(token))]) {
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ user: { id: USER.id, name: USER.name, email: USER.email } })
      expect(setCookies(res).filter((cookie) => isSessionCookieName(cookie.name))).toEqual([])
    }
  })

  const variants: [string, () => string | Promise<string>][] = [
    ['one character changed in the protected header', () => tamperPart(token, 0)],
    ['a character put in the (empty) encrypted key part', () => tamperPart(token, 1)],
    ['one character changed in the IV', () => tamperPart(token, 2)],
    ['one character changed in the ciphertext', () => tamperPart(token, 3)],
    ['one character changed in the authentication tag', () => tamperPart(token, 4)],
    ['the last character of the tag changed', () => changeCharAt(token, token.length - 1)],
    ['the token truncated by ten characters', () => token.slice(0, -10)],
    ['the token truncated to its first three parts', () => token.split('.').slice(0, 3).join('.')],
    ['an extra sixth part appended', () => `${token}.AAAA`],
    ['the ciphertext of another genuine token spliced in', async () => {
      const other = (await signIn(app)).sessionToken.split('.')
      const parts = token.split('.')
      parts[3] = other[3]!
      return parts.join('.')
    }],
    ['garbage', () => 'garbage'],
    ['five empty parts', () => '....'],
    ['non-base64url characters in every part', () => '!!!.$$$.***.(((.)))'],
    ['a cookie sealed with a different secret', async () => {
      const other = await startApp({ config: { secret: OTHER_SECRET } })
      return (await signIn(other)).sessionToken
    }],
    ['a token sealed with the right secret but another salt', () =>
      encode({ token: { sub: USER.id, name: USER.name }, secret: SECRET, salt: `__Secure-${SESSION_COOKIE}` })],
    ['an expired token (encode with maxAge -100)', () =>
      encode({ token: { sub: USER.id, name: USER.name }, secret: SECRET, salt: SESSION_COOKIE, maxAge: -100 })],
    ['the header alg swapped to none', () => withHeader(token, (header) => ({ ...header, alg: 'none' }))],
    ['the header alg swapped to A256KW', () => withHeader(token, (header) => ({ ...header, alg: 'A256KW' }))],
    ['the header alg swapped to RSA-OAEP', () => withHeader(token, (header) => ({ ...header, alg: 'RSA-OAEP' }))],
    ['the header enc swapped to A256GCM', () => withHeader(token, (header) => ({ ...header, enc: 'A256GCM' }))],
    ['the header kid removed', () => withHeader(token, ({ kid: _kid, ...header }) => header)],
    ['the header with zip: DEF added', () => withHeader(token, (header) => ({ ...header, zip: 'DEF' }))],
    ['a plain unencrypted JWT (alg none)', () =>
      `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify({ sub: USER.id, name: 'Mallory', exp: 9_999_999_999 }))}.`],
    ['an unencrypted JWT forged with a 5-part shape', () =>
      `${b64url(JSON.stringify({ alg: 'none' }))}..${b64url('iv')}.${b64url(JSON.stringify({ sub: USER.id }))}.${b64url('tag')}`],
  ]

  describe.each([
    ['GET /me', me],
    ['GET /api/auth/session', getSession],
  ] as const)('%s', (_route, read) => {
    it.each(variants)('%s: 200 null and the cookie is cleared', async (_name, make) => {
      const res = await read(app, sessionPair(await make()))
      expectNoSessionAndCleared(res)
    })

    it('an empty session cookie: 200 null, nothing set', async () => {
      // An empty value is no cookie at all; clearing it again is optional, setting it is not.
      expectNoSession(await read(app, `${SESSION_COOKIE}=`))
    })

    it('a session cookie whose value is not valid percent-encoding: 200 null, never a 5xx', async () => {
      const res = await read(app, `${SESSION_COOKIE}=%E0%A4%A; other=%%%`)
      expectNoSession(res)
    })
  })

  it('a session that expired by the clock (session.maxAge: 1, clock moved on 60 s) is no session and is cleared', async () => {
    const shortApp = await startApp({ config: { session: { maxAge: 1 } } })
    const { sessionCookie } = await signIn(shortApp)
    expect((await me(shortApp, sessionCookie)).body).toMatchObject({ user: { id: USER.id } })
    const realNow = Date.now()
    const clock = jest.spyOn(Date, 'now').mockReturnValue(realNow + 60_000)
    try {
      expectNoSessionAndCleared(await me(shortApp, sessionCookie))
      expectNoSessionAndCleared(await getSession(shortApp, sessionCookie))
    } finally {
      clock.mockRestore()
    }
  })
})

describe('chunked session cookies', () => {
  const blob = randomBytes(3000).toString('hex') // 6 KB the jwt callback puts in the token
  let app: SecurityApp
  let chunks: { name: string; pair: string; value: string }[]

  beforeAll(async () => {
    app = await startApp({
      config: {
        callbacks: {
          jwt: ({ token, user }) => (user ? { ...token, blob } : token),
          session: ({ session, token }) => ({ ...session, blob: token['blob'] }),
        },
      },
    })
    const { res } = await signIn(app)
    chunks = sessionCookiesSet(res)
      .map(({ name, pair, value }) => ({ name, pair, value }))
      .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }))
  })

  const header = (list: { pair: string }[]): string => list.map((chunk) => chunk.pair).join('; ')

  it('splits a large session into authjs.session-token.0, .1, … of at most 4 KB each', () => {
    expect(chunks.length).toBeGreaterThanOrEqual(2)
    expect(chunks.map((chunk) => chunk.name)).toEqual(chunks.map((_, index) => `${SESSION_COOKIE}.${index}`))
    for (const chunk of chunks) expect(chunk.pair.length).toBeLessThanOrEqual(4096)
  })

  it('reads the chunks back whole', async () => {
    for (const res of [await me(app, header(chunks)), await getSession(app, header(chunks))]) {
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ user: { id: USER.id }, blob })
    }
  })

  it('reads the chunks back whole whatever order the browser sends them in', async () => {
    const res = await me(app, header([...chunks].reverse()))
    expect(res.body).toMatchObject({ user: { id: USER.id }, blob })
  })

  it.each([0, 1])('a tampered chunk .%i: no session, and every chunk is cleared', async (index) => {
    const tampered = chunks.map((chunk, i) =>
      i === index ? { ...chunk, pair: `${chunk.name}=${changeCharAt(chunk.value, Math.floor(chunk.value.length / 2))}` } : chunk,
    )
    for (const res of [await me(app, header(tampered)), await getSession(app, header(tampered))]) {
      expectNoSession(res)
      for (const chunk of chunks) expect(isCleared(setCookie(res, chunk.name))).toBe(true)
    }
  })

  it('a missing middle chunk: no session, and the chunks sent are cleared', async () => {
    const sent = chunks.filter((_, index) => index !== 1)
    const res = await me(app, header(sent))
    expectNoSession(res)
    for (const chunk of sent) expect(isCleared(setCookie(res, chunk.name))).toBe(true)
  })

  it('a chunk from another session swapped in: no session', async () => {
    const { res: otherRes } = await signIn(app)
    const other = sessionCookiesSet(otherRes).find((cookie) => cookie.name === `${SESSION_COOKIE}.1`)!
    const swapped = chunks.map((chunk) => (chunk.name === other.name ? { ...chunk, pair: other.pair } : chunk))
    expectNoSession(await me(app, header(swapped)))
  })
})

/**
 * Attacks on the chunking of the session cookie (`name.0 … name.N`): a request carrying thousands
 * of chunks must not buy thousands of clearing `Set-Cookie` headers, chunks beyond the cap are
 * ignored, and a whole cookie next to chunks cannot override the session the app wrote.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { Response } from 'supertest'
import { encode } from 'portcullis/jwt'
import { SECRET, SESSION_COOKIE, USER, closeAll, cookieHeader, getCsrf, getSession, isCleared, isSessionCookieName, me, setCookies, signIn, startApp, type AuthorizeMock, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

/** The cap of src/session/cookies.ts, restated: the test is the spec. */
const MAX_CHUNKS = 10
const CHUNK_SIZE = 4096 - 160

/** `name.from … name.{to-1}=x` pairs, one character each: what a page on a sibling subdomain can plant. */
function junkChunks(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, offset) => `${SESSION_COOKIE}.${from + offset}=x`)
}

/** Every session cookie (whole or chunk) the response touched, by name. */
function sessionSetCookies(res: Response) {
  return setCookies(res).filter((cookie) => isSessionCookieName(cookie.name))
}

/** The names of the first `count` chunks. */
const chunkNames = (count: number): string[] => Array.from({ length: count }, (_, index) => `${SESSION_COOKIE}.${index}`)

/** The token split as the app splits it, as `name.i=value` pairs. */
const chunkPairs = (token: string): string[] =>
  Array.from({ length: Math.ceil(token.length / CHUNK_SIZE) }, (_, index) => `${SESSION_COOKIE}.${index}=${token.slice(index * CHUNK_SIZE, (index + 1) * CHUNK_SIZE)}`)

describe('the chunk cap', () => {
  // 400 planted chunks fit in Node's default 16 KB of request headers; before the cap each one
  // bought a clearing Set-Cookie of ~80 bytes in the response.
  const planted = cookieHeader(...junkChunks(0, 400))
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  it.each([
    ['GET /me', (cookie: string) => me(app, cookie)],
    ['GET /api/auth/session', (cookie: string) => getSession(app, cookie)],
  ])('%s with 400 chunks: no session, and only the first 10 chunks are cleared', async (_route, read) => {
    const res = await read(planted)
    expect(res.status).toBe(200)
    expect(res.body).toBeNull()
    const touched = sessionSetCookies(res)
    expect(touched.map((cookie) => cookie.name)).toEqual(chunkNames(MAX_CHUNKS))
    expect(touched.every(isCleared)).toBe(true)
  })

  it('POST /signout with 400 chunks clears the whole cookie name and the first 10 chunks, no more', async () => {
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/signout')
      .set('Cookie', cookieHeader(csrf.cookie, `${SESSION_COOKIE}=x`, planted))
      .type('form')
      .send({ csrfToken: csrf.token })
    expect(res.status).toBe(302)
    expect(sessionSetCookies(res).map((cookie) => cookie.name).sort()).toEqual([SESSION_COOKIE, ...chunkNames(MAX_CHUNKS)].sort())
  })

  it('a sign-in over 400 leftover chunks clears only the first 10', async () => {
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', cookieHeader(csrf.cookie, planted))
      .type('form')
      .send({ csrfToken: csrf.token, username: 'ada', password: 'correct-horse-battery-staple' })
    expect(res.status).toBe(302)
    const touched = sessionSetCookies(res)
    expect(touched.filter((cookie) => !isCleared(cookie)).map((cookie) => cookie.name)).toEqual([SESSION_COOKIE])
    expect(touched.filter(isCleared).map((cookie) => cookie.name)).toEqual(chunkNames(MAX_CHUNKS))
  })

  it('chunks planted beyond the cap do not break a genuine chunked session, and are never touched', async () => {
    const blob = 'b'.repeat(6000)
    const chunked = await startApp({ config: { callbacks: { jwt: ({ token, user }) => (user ? { ...token, blob } : token), session: ({ session, token }) => ({ ...session, blob: token['blob'] }) } } })
    const { sessionCookie } = await signIn(chunked)
    expect(sessionCookie).toContain(`${SESSION_COOKIE}.1=`)
    const res = await me(chunked, cookieHeader(sessionCookie, ...junkChunks(MAX_CHUNKS, 200)))
    expect(res.body).toMatchObject({ user: { id: USER.id }, blob })
    expect(sessionSetCookies(res)).toEqual([])
  })
})

describe('a genuine session token of more chunks than the cap', () => {
  let app: SecurityApp

  beforeAll(async () => {
    // A provider that signs no one in: these tests only send sessions sealed here.
    const refuseAll = jest.fn(async () => null) as unknown as AuthorizeMock
    // 11 chunks are ~43 KB of Cookie header: more than Node accepts by default (16 KB).
    app = await startApp({ authorize: refuseAll, server: { maxHeaderSize: 128 * 1024 } })
  })

  it('is no session: the chunks past the cap are not read, and only the first 10 are cleared', async () => {
    const token = await encode({ token: { sub: USER.id, name: USER.name, blob: 'x'.repeat(30_000) }, secret: SECRET, salt: SESSION_COOKIE })
    const pairs = chunkPairs(token)
    expect(pairs.length).toBe(MAX_CHUNKS + 1)
    const res = await app.http.get('/me').set('Cookie', pairs.join('; '))
    expect(res.status).toBe(200)
    expect(res.body).toBeNull()
    expect(sessionSetCookies(res).map((cookie) => cookie.name)).toEqual(chunkNames(MAX_CHUNKS))
  })

  it('is read with 10 chunks (control)', async () => {
    const token = await encode({ token: { sub: USER.id, name: USER.name, blob: 'x'.repeat(28_500) }, secret: SECRET, salt: SESSION_COOKIE })
    const pairs = chunkPairs(token)
    expect(pairs.length).toBe(MAX_CHUNKS)
    const res = await app.http.get('/me').set('Cookie', pairs.join('; '))
    expect(res.body).toMatchObject({ user: { id: USER.id } })
  })
})

describe('a whole session cookie and chunks in the same request', () => {
  // The app writes one form and clears the other in the same response, so a request carrying both
  // carries a planted form (a sibling subdomain can set cookies on the parent domain) or the
  // crossed answers of two concurrent requests. The form that opens wins; if both open, the newer
  // `iat` (the one the app wrote last); the other form is cleared.
  const blob = 'b'.repeat(6000)
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp({ config: { callbacks: { session: ({ session, token }) => ({ ...session, sub: token.sub, big: typeof token['blob'] === 'string' }) } } })
  })

  /** A token sealed with the app's secret `secondsAgo` seconds ago. */
  async function sealed(claims: Record<string, unknown>, secondsAgo = 0): Promise<string> {
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() - secondsAgo * 1000)
    try {
      return await encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE })
    } finally {
      clock.mockRestore()
    }
  }

  /** The Cookie header with the whole form first, and with the chunks first. */
  const bothOrders = (whole: string, chunks: string[]): [string, string][] => [
    ['whole cookie first', cookieHeader(`${SESSION_COOKIE}=${whole}`, ...chunks)],
    ['chunks first', cookieHeader(...chunks, `${SESSION_COOKIE}=${whole}`)],
  ]

  function expectCleared(res: Response, names: string[]): void {
    const touched = sessionSetCookies(res)
    expect(touched.map((cookie) => cookie.name).sort()).toEqual([...names].sort())
    expect(touched.every(isCleared)).toBe(true)
  }

  it('a genuine whole cookie with planted chunks: the whole one is the session, the chunks are cleared (either header order)', async () => {
    const whole = await sealed({ sub: USER.id })
    for (const [, header] of bothOrders(whole, [`${SESSION_COOKIE}.0=planted`, `${SESSION_COOKIE}.1=planted`])) {
      for (const res of [await me(app, header), await getSession(app, header)]) {
        expect(res.body).toMatchObject({ sub: USER.id, big: false })
        expectCleared(res, chunkNames(2))
      }
    }
  })

  it('genuine chunks with a planted whole cookie: the chunks are the session, the whole one is cleared (either header order)', async () => {
    const chunks = chunkPairs(await sealed({ sub: USER.id, blob }))
    expect(chunks.length).toBeGreaterThanOrEqual(2)
    for (const [, header] of bothOrders('planted', chunks)) {
      for (const res of [await me(app, header), await getSession(app, header)]) {
        expect(res.body).toMatchObject({ sub: USER.id, big: true })
        expectCleared(res, [SESSION_COOKIE])
      }
    }
  })

  it('genuine chunks with an older genuine whole cookie of another user (tossed in): the newer chunks win, the whole one is cleared', async () => {
    const whole = await sealed({ sub: 'mallory' }, 60)
    const chunks = chunkPairs(await sealed({ sub: USER.id, blob }))
    for (const [, header] of bothOrders(whole, chunks)) {
      const res = await me(app, header)
      expect(res.body).toMatchObject({ sub: USER.id, big: true })
      expectCleared(res, [SESSION_COOKIE])
    }
  })

  it('a genuine whole cookie with older genuine chunks: the newer whole one wins, the chunks are cleared', async () => {
    const whole = await sealed({ sub: USER.id })
    const chunks = chunkPairs(await sealed({ sub: 'mallory', blob }, 60))
    for (const [, header] of bothOrders(whole, chunks)) {
      const res = await me(app, header)
      expect(res.body).toMatchObject({ sub: USER.id, big: false })
      expectCleared(res, chunkNames(chunks.length))
    }
  })

  it('both forms genuine and issued in the same second: the whole one wins, the chunks are cleared', async () => {
    // Both sealed at one instant, so their iat is the same.
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now())
    let whole: string
    let chunks: string[]
    try {
      whole = await encode({ token: { sub: USER.id }, secret: SECRET, salt: SESSION_COOKIE })
      chunks = chunkPairs(await encode({ token: { sub: 'mallory', blob }, secret: SECRET, salt: SESSION_COOKIE }))
    } finally {
      clock.mockRestore()
    }
    for (const [, header] of bothOrders(whole, chunks)) {
      const res = await me(app, header)
      expect(res.body).toMatchObject({ sub: USER.id, big: false })
      expectCleared(res, chunkNames(chunks.length))
    }
  })

  it('neither form opens: no session, and both are cleared', async () => {
    const res = await me(app, cookieHeader(`${SESSION_COOKIE}=planted`, `${SESSION_COOKIE}.0=planted`))
    expect(res.body).toBeNull()
    expectCleared(res, [SESSION_COOKIE, `${SESSION_COOKIE}.0`])
  })

  it('re-sealing the winner clears the other form once, not twice', async () => {
    const resealing = await startApp({ config: { session: { updateAge: 0 } } })
    const whole = await sealed({ sub: USER.id })
    const res = await me(resealing, cookieHeader(`${SESSION_COOKIE}=${whole}`, `${SESSION_COOKIE}.0=planted`))
    expect(res.body).toMatchObject({ user: { id: USER.id } })
    const touched = sessionSetCookies(res)
    expect(touched.map((cookie) => [cookie.name, isCleared(cookie)])).toEqual([
      [SESSION_COOKIE, false],
      [`${SESSION_COOKIE}.0`, true],
    ])
  })

  it('sign-out ends the session of the form that wins and clears both forms', async () => {
    const whole = await sealed({ sub: 'mallory' }, 60)
    const chunks = chunkPairs(await sealed({ sub: USER.id, blob }))
    const signOut = jest.fn<(message: unknown) => void>()
    const events = await startApp({ config: { events: { signOut } } })
    const csrf = await getCsrf(events)
    const res = await events.http
      .post('/api/auth/signout')
      .set('Cookie', cookieHeader(csrf.cookie, `${SESSION_COOKIE}=${whole}`, ...chunks))
      .type('form')
      .send({ csrfToken: csrf.token })
    expect(res.status).toBe(302)
    expect(signOut).toHaveBeenCalledWith({ token: expect.objectContaining({ sub: USER.id }) })
    expectCleared(res, [SESSION_COOKIE, ...chunkNames(chunks.length)])
  })
})

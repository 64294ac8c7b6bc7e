/**
 * Attacks on the chunking of the session cookie (`name.0 … name.N`): a request carrying thousands
 * of chunks must not buy thousands of clearing `Set-Cookie` headers, chunks beyond the cap are
 * ignored, and a whole cookie next to chunks cannot override the session the app wrote.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import express from 'express'
import request from 'supertest'
import type { Response } from 'supertest'
import Portcullis from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { encode } from 'portcullis/jwt'
import {
  SECRET,
  SESSION_COOKIE,
  USER,
  closeAll,
  cookieHeader,
  getCsrf,
  getSession,
  isCleared,
  isSessionCookieName,
  me,
  setCookies,
  signIn,
  startApp,
  type SecurityApp,
} from '../support/security-app.js'

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
  let server: Server
  let origin: string

  beforeAll(async () => {
    const { handlers, auth } = Portcullis({ secret: SECRET, providers: [Credentials({ authorize: async () => null })] })
    const app = express()
    app.use('/api/auth', handlers)
    app.get('/me', async (req, res) => void res.json(await auth(req, res)))
    // 11 chunks are ~43 KB of Cookie header: more than Node accepts by default (16 KB).
    server = createServer({ maxHeaderSize: 128 * 1024 }, app)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('is no session: the chunks past the cap are not read, and only the first 10 are cleared', async () => {
    const token = await encode({ token: { sub: USER.id, name: USER.name, blob: 'x'.repeat(30_000) }, secret: SECRET, salt: SESSION_COOKIE })
    const pairs = chunkPairs(token)
    expect(pairs.length).toBe(MAX_CHUNKS + 1)
    const res = await request(origin).get('/me').set('Cookie', pairs.join('; '))
    expect(res.status).toBe(200)
    expect(res.body).toBeNull()
    expect(sessionSetCookies(res).map((cookie) => cookie.name)).toEqual(chunkNames(MAX_CHUNKS))
  })

  it('is read with 10 chunks (control)', async () => {
    const token = await encode({ token: { sub: USER.id, name: USER.name, blob: 'x'.repeat(28_500) }, secret: SECRET, salt: SESSION_COOKIE })
    const pairs = chunkPairs(token)
    expect(pairs.length).toBe(MAX_CHUNKS)
    const res = await request(origin).get('/me').set('Cookie', pairs.join('; '))
    expect(res.body).toMatchObject({ user: { id: USER.id } })
  })
})

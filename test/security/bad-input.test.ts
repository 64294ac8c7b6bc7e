/**
 * Bad input on every route (DESIGN §3, §9): a clear 4xx, a redirect or a page, never a 5xx, a
 * crash, a stack trace or an internal error message sent to the client. At the end, the same
 * server still signs people in.
 */
import { Agent, request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { Response } from 'supertest'
import Portcullis from 'portcullis'
import type { CallbacksOptions, LoggerInstance, User } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { PASSWORD, SESSION_COOKIE, USER, USERNAME, closeAll, cookieHeader, getCsrf, me, sessionCookiesSet, signIn, startApp, type SecurityApp } from '../support/security-app.js'
import { recordingLogger } from '../support/logger.js'
import { STEP_LIMIT_MS } from '../support/time-limits.js'

afterAll(closeAll)

const INTERNAL_DETAIL = 'db-down-internal-detail-7f3a'

interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A request through node:http, for what supertest will not send (no Host, odd Host, chunked bodies). */
function rawRequest(app: SecurityApp, options: { method?: string; path: string; headers?: Record<string, string>; setHost?: boolean; body?: Buffer | string }): Promise<RawResponse> {
  const { port } = new URL(app.origin)
  // A keep-alive client of its own, as browsers are: whether the server closes the connection is
  // part of what some tests check, and no test can leave a half-used socket to the next one.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  return new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(
      { agent, host: '127.0.0.1', port: Number(port), method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: options.setHost ?? true },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    // A request the server never answers must fail the test, before Jest's limit, and say so.
    req.setTimeout(STEP_LIMIT_MS, () => req.destroy(new Error(`no response to ${options.method ?? 'GET'} ${options.path} within ${STEP_LIMIT_MS / 1000} s`)))
    req.on('error', reject)
    req.end(options.body)
  }).finally(() => agent.destroy())
}

/** Raw bytes over TCP (an HTTP/1.0 request without Host, which node:http's client cannot send). */
function rawSocket(app: SecurityApp, text: string): Promise<string> {
  const { port } = new URL(app.origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(text))
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
  })
}

/** A client error or a page/redirect, but nothing from the server's side of the 5xx range, and no internals. */
function expectHandled(res: { status: number; text?: string; body?: unknown }): void {
  const text = typeof res.text === 'string' ? res.text : typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '')
  expect({ status: res.status, ok: res.status >= 200 && res.status < 500 }).toEqual({ status: res.status, ok: true })
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/) // no stack trace
  expect(text).not.toContain(INTERNAL_DETAIL)
  expect(text).not.toMatch(/\/work\/|node_modules|src\//)
}

function expectJsonError(res: Response, status: number, error?: string): void {
  expect(res.status).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  const body = res.body as { error?: unknown; message?: unknown }
  expect(typeof body.error).toBe('string')
  expect(typeof body.message).toBe('string')
  if (error !== undefined) expect(body.error).toBe(error)
  expectHandled(res)
}

const logger = { error: jest.fn<LoggerInstance['error']>(), warn: jest.fn<LoggerInstance['warn']>(), debug: jest.fn<LoggerInstance['debug']>() }
const loggedText = (mock: jest.Mock<(code: string, ...message: unknown[]) => void>): string => JSON.stringify(mock.mock.calls)

/** Callbacks that throw when the user's name asks them to. */
const jwt: NonNullable<CallbacksOptions['jwt']> = ({ token, trigger, user }) => {
  if (trigger === 'signIn' && user?.name === 'jwt-throws-on-sign-in') throw new Error(`jwt: ${INTERNAL_DETAIL}`)
  if (trigger === undefined && token.name === 'jwt-throws-on-read') throw new Error(`jwt: ${INTERNAL_DETAIL}`)
  if (trigger === 'update' && token.name === 'jwt-throws-on-update') throw new Error(`jwt: ${INTERNAL_DETAIL}`)
  return token
}
const session: NonNullable<CallbacksOptions['session']> = ({ session: value, token }) => {
  if (token.name === 'session-throws') throw new Error(`session: ${INTERNAL_DETAIL}`)
  return value
}
const signInCallback: NonNullable<CallbacksOptions['signIn']> = ({ user }) => {
  if (user.name === 'signin-throws') throw new Error(`signIn: ${INTERNAL_DETAIL}`)
  return true
}
const redirect: NonNullable<CallbacksOptions['redirect']> = ({ url, baseUrl }) => {
  if (url.includes('redirect-throws')) throw new Error(`redirect: ${INTERNAL_DETAIL}`)
  return url.startsWith(baseUrl) || url.startsWith('/') ? new URL(url, baseUrl).href : baseUrl
}

/** What the `odd` provider's authorize returns next. */
let oddResult: unknown = null

describe('bad input', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp({
      config: {
        logger,
        callbacks: { jwt, session, signIn: signInCallback, redirect },
        events: {
          signIn: ({ user }) => {
            if (user.name === 'event-throws') throw new Error(`event: ${INTERNAL_DETAIL}`)
          },
        },
        providers: [
          Credentials({
            authorize: async (credentials) =>
              credentials['password'] === PASSWORD ? { id: USER.id, name: String(credentials['username']), email: USER.email } : null,
          }),
          Credentials({
            id: 'broken',
            authorize: async () => {
              throw new Error(`authorize: ${INTERNAL_DETAIL}`)
            },
          }),
          Credentials({ id: 'odd', authorize: async () => oddResult as User | null }),
        ],
      },
    })
  })

  /** A sign-in as `name` through the default provider; the session cookie (which may be missing). */
  async function signInAs(name: string): Promise<{ res: Response; cookie: string }> {
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', csrf.cookie)
      .type('form')
      .send({ csrfToken: csrf.token, username: name, password: PASSWORD })
    return { res, cookie: cookieHeader(...sessionCookiesSet(res).map((cookie) => cookie.pair)) }
  }

  /** POST `path` with a valid CSRF token and cookie, plus `body` (form-encoded). */
  async function postWithCsrf(path: string, body: Record<string, string> = {}, cookies: string[] = []) {
    const csrf = await getCsrf(app)
    return app.http
      .post(path)
      .set('Cookie', cookieHeader(csrf.cookie, ...cookies))
      .type('form')
      .send({ csrfToken: csrf.token, ...body })
  }

  describe('unknown routes', () => {
    it.each([
      ['GET', '/api/auth/nope'],
      ['POST', '/api/auth/nope'],
      ['GET', '/api/auth'],
      ['POST', '/api/auth'],
      ['GET', '/api/auth/'],
      ['GET', '/api/auth/signin/nope'],
      ['GET', '/api/auth/signin/credentials'],
      ['GET', '/api/auth/callback/nope'],
      ['POST', '/api/auth/callback/nope'],
      ['GET', '/api/auth/callback/%E0%A4%A'],
      ['POST', '/api/auth/callback/%E0%A4%A'],
      ['GET', '/api/auth/signin/%00'],
      ['GET', '/api/auth/callback/credentials/extra'],
      ['GET', '/api/auth/session/..%2F..%2Fetc%2Fpasswd'],
      ['GET', '/api/auth/__proto__'],
      ['GET', '/api/auth/constructor'],
      ['POST', '/api/auth/hasOwnProperty'],
      ['GET', '/api/auth/callback/__proto__'],
      ['GET', '/api/auth/callback/constructor'],
    ])('%s %s answers 400 JSON', async (method, path) => {
      const res = await app.http[method === 'GET' ? 'get' : 'post'](path)
      expectJsonError(res, 400)
      expect(['UnknownAction', 'InvalidProvider']).toContain((res.body as { error: string }).error)
    })

    it('GET a credentials callback (it takes only POST) answers 400, not a page crash', async () => {
      expectJsonError(await app.http.get('/api/auth/callback/credentials'), 400)
    })

    it('POST /signin/nope with a valid CSRF token answers 400 InvalidProvider', async () => {
      expectJsonError(await postWithCsrf('/api/auth/signin/nope'), 400, 'InvalidProvider')
    })

    it('GET /api/auth//[ (a path that is not a valid relative URL) answers 400', async () => {
      const res = await rawRequest(app, { path: '/api/auth//[' })
      expectHandled(res)
      expect(res.status).toBe(400)
    })

    it.each(['/api/auth//signin', '/api/auth//evil.example/signin', '/api/auth/./signin', '/api/auth/signin/../session'])('GET %s does not crash', async (path) => {
      expectHandled(await rawRequest(app, { path }))
    })
  })

  describe('unsupported methods', () => {
    const routes = ['/providers', '/csrf', '/session', '/signin', '/signin/credentials', '/callback/credentials', '/signout', '/error', '/verify-request', '/nope']
    const methods = ['put', 'delete', 'patch', 'options'] as const

    it.each(methods.flatMap((method) => routes.map((route) => [method.toUpperCase(), route, method] as const)))(
      '%s /api/auth%s answers 400 UnknownAction',
      async (_name, route, method) => {
        expectJsonError(await app.http[method](`/api/auth${route}`), 400, 'UnknownAction')
      },
    )

    it.each(['TRACE', 'PROPFIND', 'CONNECT-ISH'])('%s /api/auth/session answers 400 (or is refused by node:http) without a crash', async (method) => {
      const res = await rawRequest(app, { method: method === 'CONNECT-ISH' ? 'SEARCH' : method, path: '/api/auth/session' })
      expectHandled(res)
      expect(res.status).toBe(400)
    })

    it('HEAD /api/auth/session is served like GET, without a body', async () => {
      const res = await app.http.head('/api/auth/session')
      expect(res.status).toBe(200)
    })
  })

  describe('bodies', () => {
    const postRoutes = ['/api/auth/callback/credentials', '/api/auth/signin/credentials', '/api/auth/signout', '/api/auth/session']

    it.each(postRoutes)('POST %s with malformed JSON answers 400', async (path) => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).set('Content-Type', 'application/json').send('{"csrfToken": "x", ')
      expectJsonError(res, 400, 'InvalidRequest')
    })

    it.each([
      ['a JSON array', '[1, 2, 3]'],
      ['JSON null', 'null'],
      ['a JSON string', '"csrfToken"'],
      ['a JSON number', '42'],
    ])('POST /callback/credentials with %s answers 400', async (_name, body) => {
      const res = await app.http.post('/api/auth/callback/credentials').set('Content-Type', 'application/json').send(body)
      expectJsonError(res, 400, 'InvalidRequest')
    })

    it('POST with deeply nested JSON answers without a crash', async () => {
      const body = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`
      const res = await app.http.post('/api/auth/session').set('Content-Type', 'application/json').send(body)
      expectHandled(res)
      expect(res.status).toBe(403) // parsed fine, then refused: no CSRF token
    })

    it('a JSON body with __proto__ pollutes nothing and cannot supply the CSRF token through the prototype', async () => {
      const csrf = await getCsrf(app)
      const body = `{"__proto__": {"polluted": "yes", "csrfToken": "${csrf.token}"}, "constructor": {"prototype": {"polluted": "yes"}}, "username": "${USERNAME}", "password": "${PASSWORD}"}`
      const res = await app.http.post('/api/auth/callback/credentials').set('Cookie', csrf.cookie).set('Content-Type', 'application/json').send(body)
      // A JSON body asks for JSON: the refusal comes as 403 JSON rather than the form post's 302.
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ error: 'MissingCSRF', url: `${app.origin}/api/auth/signin?error=MissingCSRF` })
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty('polluted')
    })

    it('a JSON sign-in with __proto__ among the credentials pollutes nothing', async () => {
      const csrf = await getCsrf(app)
      const body = `{"csrfToken": "${csrf.token}", "__proto__": {"polluted": "yes"}, "username": "${USERNAME}", "password": "${PASSWORD}"}`
      const res = await app.http.post('/api/auth/callback/credentials').set('Cookie', csrf.cookie).set('Content-Type', 'application/json').send(body)
      expect(res.status).toBe(302)
      expect(sessionCookiesSet(res)).toHaveLength(1)
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    })

    it('a form body with __proto__[polluted] and constructor[prototype][polluted] pollutes nothing', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http
        .post('/api/auth/callback/credentials')
        .set('Cookie', csrf.cookie)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`csrfToken=${csrf.token}&__proto__[polluted]=yes&__proto__=x&constructor[prototype][polluted]=yes&username=${USERNAME}&password=${PASSWORD}`)
      expectHandled(res)
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    })

    it('POST /session with __proto__ in data pollutes nothing', async () => {
      const { cookie } = await signInAs(USERNAME)
      const csrf = await getCsrf(app)
      const res = await app.http
        .post('/api/auth/session')
        .set('Cookie', cookieHeader(csrf.cookie, cookie))
        .set('Content-Type', 'application/json')
        .send(`{"csrfToken": "${csrf.token}", "data": {"__proto__": {"polluted": "yes"}}}`)
      expectHandled(res)
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    })

    it.each(postRoutes)('POST %s with a body over 64 KB answers 413', async (path) => {
      const csrf = await getCsrf(app)
      const res = await app.http
        .post(path)
        .set('Cookie', csrf.cookie)
        .type('form')
        .send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD, padding: 'x'.repeat(70 * 1024) })
      expectJsonError(res, 413, 'InvalidRequest')
    })

    it('a chunked body (no Content-Length) over 64 KB answers 413', async () => {
      const res = await rawRequest(app, {
        method: 'POST',
        path: '/api/auth/callback/credentials',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
        body: `padding=${'x'.repeat(100 * 1024)}`,
      })
      expect(res.status).toBe(413)
      expect(JSON.parse(res.body)).toMatchObject({ error: 'InvalidRequest' })
    })

    it('a chunked body over 64 KB: the 413 closes the connection (the rest is not read)', async () => {
      const res = await rawRequest(app, {
        method: 'POST',
        path: '/api/auth/signout',
        headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        body: `{"x":"${'y'.repeat(100 * 1024)}"}`,
      })
      expect(res.status).toBe(413)
      expect(res.headers['connection']).toBe('close')
    })

    it('a Content-Length over 64 KB answers 413 at once and closes the connection instead of draining the body', async () => {
      // Only the start of the promised 10 MB is sent: a server that keeps the connection open
      // after its 413 goes on reading (and discarding) whatever the client streams.
      const res = await rawRequest(app, {
        method: 'POST',
        path: '/api/auth/signout',
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(10 * 1024 * 1024) },
        body: '{}',
      })
      expect(res.status).toBe(413)
      expect(res.headers['connection']).toBe('close')
    })

    it.each([
      ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="csrfToken"\r\n\r\nabc\r\n--xyz--\r\n'],
      ['text/plain', 'csrfToken=abc&username=ada'],
      ['application/xml', '<a/>'],
    ])('POST /callback/credentials with Content-Type %j answers 415', async (type, body) => {
      const res = await app.http.post('/api/auth/callback/credentials').set('Content-Type', type).send(body)
      expectJsonError(res, 415, 'InvalidRequest')
    })

    it('POST /callback/credentials with a body and no Content-Type answers 415', async () => {
      const res = await rawRequest(app, { method: 'POST', path: '/api/auth/callback/credentials', body: 'csrfToken=abc' })
      expect(res.status).toBe(415)
      expect(JSON.parse(res.body)).toMatchObject({ error: 'InvalidRequest' })
    })
  })

  describe('cookies', () => {
    const garbage = [
      '%%%; =; authjs.session-token=%E0',
      `${SESSION_COOKIE}=; ${SESSION_COOKIE}.0=%E0%A4%A; ${SESSION_COOKIE}.x=1; ${SESSION_COOKIE}.99999999999999999999=a`,
      'authjs.csrf-token=%E0%A4%A|%ZZ; authjs.callback-url=%E0',
      `${SESSION_COOKIE}=${'A'.repeat(7000)}`,
      '===; ;;; ; a=b=c; "quoted"="x"',
      '__proto__=x; constructor=y; hasOwnProperty=z',
    ]

    it.each(garbage)('Cookie: %s on /me and GET /api/auth/session → 200 null', async (cookie) => {
      for (const res of [await me(app, cookie), await app.http.get('/api/auth/session').set('Cookie', cookie)]) {
        expectHandled(res)
        expect(res.status).toBe(200)
        expect(res.body).toBeNull()
      }
    })

    it.each(garbage)('Cookie: %s on the pages and POSTs → no crash', async (cookie) => {
      for (const res of [
        await app.http.get('/api/auth/signin').set('Cookie', cookie),
        await app.http.get('/api/auth/signout').set('Cookie', cookie),
        await app.http.get('/api/auth/csrf').set('Cookie', cookie),
        await app.http.post('/api/auth/signout').set('Cookie', cookie).type('form').send({ csrfToken: 'x' }),
        await app.http.post('/api/auth/callback/credentials').set('Cookie', cookie).type('form').send({ csrfToken: 'x' }),
        await app.http.post('/api/auth/session').set('Cookie', cookie).send({ csrfToken: 'x' }),
      ]) {
        expectHandled(res)
      }
    })
  })

  describe('Host header', () => {
    it('a request without Host (HTTP/1.1, setHost: false) is refused with a 4xx', async () => {
      const res = await rawRequest(app, { path: '/api/auth/signin', setHost: false })
      expectHandled(res)
      expect(res.status).toBe(400)
    })

    it('an HTTP/1.0 request without Host answers 400 JSON InvalidRequest', async () => {
      const response = await rawSocket(app, 'GET /api/auth/signin HTTP/1.0\r\n\r\n')
      expect(response).toMatch(/^HTTP\/1\.[01] 400 /)
      expect(response).toContain('InvalidRequest')
    })

    const badHosts = ['evil.example/../x', 'evil.example@x', 'a b', 'evil.example:80:80', '[::1', 'evil.example\\x', '<script>']
    it.each(badHosts)('Host: %j answers 400 on GET /signin, POST /signout and GET /error', async (host) => {
      for (const [method, path] of [
        ['GET', '/api/auth/signin'],
        ['POST', '/api/auth/signout'],
        ['GET', '/api/auth/error'],
      ] as const) {
        const res = await rawRequest(app, { method, path, headers: { Host: host, 'Content-Type': 'application/json' }, body: method === 'POST' ? '{}' : undefined })
        expectHandled(res)
        expect(res.status).toBe(400)
      }
    })

    // These pass a character-class check but are not valid hosts for the URL parser.
    const unparsableHosts = ['127.0.0.1:99999', 'example.com:65536', '999.1.1.1', '1.2.3.4.5', '[1:2:3]', '09.1.1.1']
    it.each(unparsableHosts)('Host: %j (not parsable as a URL host) answers 4xx, not 5xx', async (host) => {
      const requests = [
        ['GET', '/api/auth/signin'],
        ['GET', '/api/auth/signin?callbackUrl=%2Fx'],
        ['GET', '/api/auth/error'],
        ['POST', '/api/auth/signout'],
        ['POST', '/api/auth/callback/credentials'],
      ] as const
      const answers = []
      for (const [method, path] of requests) {
        const res = await rawRequest(app, { method, path, headers: { Host: host, 'Content-Type': 'application/json' }, body: method === 'POST' ? '{}' : undefined })
        const leaks = /\n\s+at .+:\d+:\d+/.test(res.body) ? ' with a stack trace' : ''
        answers.push(`${method} ${path}: ${res.status < 500 ? 'handled' : `${res.status}${leaks}`}`)
      }
      expect(answers).toEqual(requests.map(([method, path]) => `${method} ${path}: handled`))
    })
  })

  describe('long query strings', () => {
    it.each([
      ['a 8 KB callbackUrl', `/api/auth/signin?callbackUrl=${'%2Fa'.repeat(2700)}`],
      ['a 8 KB error', `/api/auth/error?error=${'A'.repeat(8000)}`],
      ['2000 repeated parameters', `/api/auth/signin?${'callbackUrl=%2F&'.repeat(700)}`],
      ['a 12 KB query on /session', `/api/auth/session?x=${'y'.repeat(12000)}`],
    ])('%s: answered without a 5xx', async (_name, path) => {
      const res = await app.http.get(path)
      expectHandled(res)
      expect(res.status).toBeLessThan(500)
    })

    it('a query beyond node:http header limits is refused by node (431), not a crash', async () => {
      const res = await rawRequest(app, { path: `/api/auth/signin?callbackUrl=${'a'.repeat(40_000)}` })
      expect(res.status).toBe(431)
    })
  })

  describe('authorize and callbacks that throw', () => {
    it('an authorize that throws → 302 to /error?error=Configuration, the message only in logger.error', async () => {
      logger.error.mockClear()
      const res = await postWithCsrf('/api/auth/callback/broken', { username: USERNAME, password: PASSWORD })
      expect(res.status).toBe(302)
      expect(res.headers['location']).toBe(`${app.origin}/api/auth/error?error=Configuration`)
      expect(sessionCookiesSet(res)).toEqual([])
      expectHandled(res)
      expect(loggedText(logger.error)).toContain(INTERNAL_DETAIL)
    })

    it('an authorize that throws, with X-Auth-Return-Redirect: 1 → 200 { url, error: Configuration }', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http
        .post('/api/auth/callback/broken')
        .set('Cookie', csrf.cookie)
        .set('X-Auth-Return-Redirect', '1')
        .type('form')
        .send({ csrfToken: csrf.token })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ url: `${app.origin}/api/auth/error?error=Configuration`, error: 'Configuration', message: 'The server could not complete the request; its log says why.' })
      expectHandled(res)
    })

    it.each([
      ['a string', 'user-1'],
      ['a number', 42],
      ['an array', [{ id: 'x' }]],
      ['an object without id', { name: 'No Id' }],
      ['an object whose id cannot be turned into a string', { id: { toString: () => { throw new Error(INTERNAL_DETAIL) } } }],
      ['an object with a circular name', (() => { const name: Record<string, unknown> = {}; name['self'] = name; return { id: 'c', name } })()],
      ['an object with a BigInt email', { id: 'b', email: 10n }],
    ])('an authorize returning %s: no 5xx and no internals', async (_name, result) => {
      oddResult = result
      const res = await postWithCsrf('/api/auth/callback/odd')
      expectHandled(res)
      expect([200, 302]).toContain(res.status)
    })

    it.each([
      ['the signIn callback', 'signin-throws'],
      ['the jwt callback on sign-in', 'jwt-throws-on-sign-in'],
    ])('%s throwing → 302 to /error?error=Configuration, no session', async (_name, username) => {
      logger.error.mockClear()
      const { res } = await signInAs(username)
      expect(res.status).toBe(302)
      expect(res.headers['location']).toBe(`${app.origin}/api/auth/error?error=Configuration`)
      expect(sessionCookiesSet(res)).toEqual([])
      expectHandled(res)
      expect(loggedText(logger.error)).toContain(INTERNAL_DETAIL)
    })

    it('the redirect callback throwing → no 5xx, no internals', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http
        .post('/api/auth/callback/credentials')
        .set('Cookie', csrf.cookie)
        .type('form')
        .send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD, callbackUrl: '/redirect-throws' })
      expectHandled(res)
      expect(res.status).toBe(302)
      expect(new URL(res.headers['location'] as string).searchParams.get('error')).toBe('Configuration')
    })

    it('a signIn event that throws is logged and the sign-in goes ahead', async () => {
      logger.error.mockClear()
      const { res, cookie } = await signInAs('event-throws')
      expect(res.status).toBe(302)
      expect(res.headers['location']).toBe(`${app.origin}/`)
      expect((await me(app, cookie)).body).toMatchObject({ user: { name: 'event-throws' } })
      expect(loggedText(logger.error)).toContain(INTERNAL_DETAIL)
    })

    it.each([
      ['the jwt callback', 'jwt-throws-on-read'],
      ['the session callback', 'session-throws'],
    ])('%s throwing on GET /api/auth/session: no 5xx, JSON kept, no internals', async (_name, username) => {
      const { cookie } = await signInAs(username)
      expect(cookie).not.toBe('')
      logger.error.mockClear()
      const res = await app.http.get('/api/auth/session').set('Cookie', cookie)
      expectHandled(res)
      // GET /session is what Auth.js clients fetch and parse as JSON: an HTML error page (or a
      // redirect to one) breaks them. Auth.js answers a failed session read with 200 `null`.
      expect(res.headers['content-type'] ?? `no body: ${res.status} to ${String(res.headers['location'])}`).toMatch(/^application\/json/)
      expect(loggedText(logger.error)).toContain(INTERNAL_DETAIL)
    })

    it('the jwt callback throwing on POST /session (update): no 5xx, JSON kept, no internals', async () => {
      const { cookie } = await signInAs('jwt-throws-on-update')
      const csrf = await getCsrf(app)
      const res = await app.http
        .post('/api/auth/session')
        .set('Cookie', cookieHeader(csrf.cookie, cookie))
        .send({ csrfToken: csrf.token, data: { name: 'x' } })
      expectHandled(res)
      expect(res.headers['content-type'] ?? `no body: ${res.status} to ${String(res.headers['location'])}`).toMatch(/^application\/json/)
    })
  })

  describe('Express 4 (its router ignores the promise a handler returns)', () => {
    let app4: SecurityApp

    beforeAll(async () => {
      app4 = await startApp({ flavor: 'express4', config: { logger } })
    })

    // On Express 4 a rejected `handlers` promise is an unhandled rejection: the request is never
    // answered, and under Node's default --unhandled-rejections=throw the whole process exits.
    // One test for all cases, so that Jest reports any such rejection here and not elsewhere.
    it('answers malformed requests (bad path, unparsable Host) instead of leaving a rejected promise', async () => {
      const cases = [
        ['GET', '/api/auth//[', undefined],
        ['GET', '/api/auth/signin', '999.1.1.1'],
        ['POST', '/api/auth/signout', '999.1.1.1'],
        ['POST', '/api/auth/callback/credentials', '[1:2:3]'],
        ['GET', '/api/auth/error', '127.0.0.1:99999'],
      ] as const
      const answers = []
      for (const [method, path, host] of cases) {
        const res = await rawRequest(app4, {
          method,
          path,
          headers: host ? { Host: host, 'Content-Type': 'application/json' } : undefined,
          body: method === 'POST' ? '{}' : undefined,
        }).catch((error: Error) => ({ status: -1, body: error.message }))
        answers.push({ method, path, host, answered: res.status >= 200 && res.status < 500 ? 'yes' : `no (${res.status}: ${res.body.slice(0, 60)})` })
      }
      expect(answers).toEqual(cases.map(([method, path, host]) => ({ method, path, host, answered: 'yes' })))
      expect((await signIn(app4)).sessionToken).toBeTruthy()
    })
  })

  it('after all of it, the same app still signs in, reads and signs out normally', async () => {
    const { sessionCookie } = await signIn(app)
    const session = await me(app, sessionCookie)
    expect(session.status).toBe(200)
    expect(session.body).toMatchObject({ user: { id: USER.id, name: USERNAME } })
    const out = await postWithCsrf('/api/auth/signout', {}, [sessionCookie])
    expect(out.status).toBe(302)
  })
})

describe('Portcullis without a body parser in front, behind express.json()', () => {
  it('uses the body the app already parsed, and still enforces CSRF', async () => {
    const { default: express } = await import('express')
    const portcullis = Portcullis({
      logger: recordingLogger(),
      secret: 'a-test-secret-that-is-at-least-32-chars',
      providers: [Credentials({ authorize: async (c) => (c['password'] === PASSWORD ? { ...USER } : null) })],
    })
    const app = express()
    app.use(express.json(), express.urlencoded({ extended: true }))
    app.use('/api/auth', portcullis.handlers)
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const { port } = server.address() as { port: number }
      const { default: request } = await import('supertest')
      const http = request(`http://127.0.0.1:${port}`)
      const res = await http.post('/api/auth/callback/credentials').send({ username: USERNAME, password: PASSWORD, __proto__: { csrfToken: 'x' } })
      expect(res.status).toBe(403)
      expect(res.body.url).toMatch(/error=MissingCSRF/)
      expect(({} as Record<string, unknown>)['csrfToken']).toBeUndefined()
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

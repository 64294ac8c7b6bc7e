/**
 * Attacks on the double-submit CSRF check (DESIGN §4): every state-changing POST must refuse a
 * request whose body token and signed cookie do not prove it came from our own form, and must
 * change nothing when it refuses.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals'
import type { Response } from 'supertest'
import type { CallbacksOptions, EventsOptions } from 'portcullis'
import { CALLBACK_COOKIE, CSRF_COOKIE, OTHER_SECRET, PASSWORD, SESSION_COOKIE, USER, USERNAME, closeAll, cookieHeader, csrfCookieFor, getCsrf, isCleared, me, sessionCookiesSet, setCookie, setCookies, signIn, startApp, type Csrf, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex')

/** What an attacker's request carries instead of a matching token and cookie. */
interface Forgery {
  /** The CSRF cookie pair, if any. */
  cookie?: string
  /** The `csrfToken` body field; `undefined` leaves it out. */
  bodyToken?: unknown
  /** A query string appended to the URL. */
  query?: string
}

/** Each way a request can fail the check. `mine` is the victim's token, `theirs` another valid one. */
const FORGERIES: [string, (mine: Csrf, theirs: Csrf) => Forgery][] = [
  ['the csrfToken is missing from the body', (mine) => ({ cookie: mine.cookie })],
  ['the CSRF cookie is missing', (mine) => ({ bodyToken: mine.token })],
  ['the body token does not match the cookie', (mine, theirs) => ({ cookie: mine.cookie, bodyToken: theirs.token })],
  [
    "the cookie's hash part is forged (token|sha256(token)) and the body repeats the cookie token",
    (mine) => ({ cookie: `${CSRF_COOKIE}=${encodeURIComponent(`${mine.token}|${sha256Hex(mine.token)}`)}`, bodyToken: mine.token }),
  ],
  [
    "the cookie's hash part is the hash of something else entirely",
    (mine) => ({ cookie: `${CSRF_COOKIE}=${encodeURIComponent(`${mine.token}|${sha256Hex('something else')}`)}`, bodyToken: mine.token }),
  ],
  ['the cookie was made with another secret', (mine) => ({ cookie: csrfCookieFor(mine.token, OTHER_SECRET), bodyToken: mine.token })],
  ['the cookie is the bare token without a hash', (mine) => ({ cookie: `${CSRF_COOKIE}=${mine.token}`, bodyToken: mine.token })],
  ['the cookie has an empty token before the hash', (mine) => ({ cookie: `${CSRF_COOKIE}=${encodeURIComponent(`|${mine.cookieValue.split('|')[1]}`)}`, bodyToken: '' })],
  [
    'the token is sent as a query parameter instead of in the body',
    (mine) => ({ cookie: mine.cookie, query: `?csrfToken=${encodeURIComponent(mine.token)}` }),
  ],
  ['the body token is an array holding the right token', (mine) => ({ cookie: mine.cookie, bodyToken: [mine.token] })],
]

/** POSTs `fields` plus the forgery as JSON (so non-string tokens can be sent). */
function forgedPost(app: SecurityApp, path: string, forgery: Forgery, fields: Record<string, unknown>, extraCookies: string[] = []) {
  const body = forgery.bodyToken === undefined ? fields : { ...fields, csrfToken: forgery.bodyToken }
  const cookie = cookieHeader(forgery.cookie, ...extraCookies)
  const test = app.http.post(`${path}${forgery.query ?? ''}`).type('json')
  return (cookie ? test.set('Cookie', cookie) : test).send(body)
}

// What a browser's form post gets.
function expectMissingCsrfRedirect(app: SecurityApp, res: Response): void {
  expect(res.status).toBe(302)
  expect(res.headers['location']).toBe(`${app.origin}/api/auth/signin?error=MissingCSRF`)
}

// The forgeries are JSON bodies, which ask for JSON: the refusal is a 403 with the code, the fix and
// the sign-in page's URL, not the 302 a browser's form post gets.
function expectMissingCsrfRefusal(app: SecurityApp, res: Response): void {
  expect(res.status).toBe(403)
  expect(res.headers['location']).toBeUndefined()
  expect(res.body).toEqual({ error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf'), url: `${app.origin}/api/auth/signin?error=MissingCSRF` })
}

function expectNoSessionCookieWritten(res: Response): void {
  // Neither a new session (set with a value) nor a sign-out (cleared) may come out of a refused POST.
  expect(setCookies(res).filter((cookie) => cookie.name.startsWith(SESSION_COOKIE))).toEqual([])
}

describe.each(['express5', 'express4'] as const)('CSRF on %s', (flavor) => {
  const jwt = jest.fn<NonNullable<CallbacksOptions['jwt']>>(async ({ token, trigger, session }) => {
    const name = (session as { name?: unknown } | undefined)?.name
    return trigger === 'update' && typeof name === 'string' ? { ...token, name } : token
  })
  const onSignOut = jest.fn<NonNullable<EventsOptions['signOut']>>(async () => {})
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp({ flavor, config: { callbacks: { jwt }, events: { signOut: onSignOut } } })
  })
  beforeEach(() => {
    app.authorize.mockClear()
    jwt.mockClear()
    onSignOut.mockClear()
  })

  describe('POST /callback/credentials', () => {
    const path = '/api/auth/callback/credentials'
    const fields = { username: USERNAME, password: PASSWORD }

    it('signs in with a matching token and cookie (control)', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).type('form').send({ ...fields, csrfToken: csrf.token })
      expect(res.status).toBe(302)
      expect(res.headers['location']).toBe(`${app.origin}/`)
      expect(sessionCookiesSet(res)).toHaveLength(1)
      expect(app.authorize).toHaveBeenCalledTimes(1)
    })

    it.each(FORGERIES)('is refused when %s: no authorize call, no session', async (_name, forge) => {
      const [mine, theirs] = [await getCsrf(app), await getCsrf(app)]
      const res = await forgedPost(app, path, forge(mine, theirs), fields)
      expectMissingCsrfRefusal(app, res)
      expectNoSessionCookieWritten(res)
      expect(setCookie(res, CALLBACK_COOKIE)).toBeUndefined()
      expect(app.authorize).not.toHaveBeenCalled()
      expect(jwt).not.toHaveBeenCalled()
    })

    it('is refused for a form-encoded body without a token, too', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).type('form').send(fields)
      expectMissingCsrfRedirect(app, res)
      expectNoSessionCookieWritten(res)
      expect(app.authorize).not.toHaveBeenCalled()
    })

    it('answers 200 JSON { url } with error=MissingCSRF for X-Auth-Return-Redirect: 1', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).set('X-Auth-Return-Redirect', '1').type('form').send(fields)
      expect(res.status).toBe(200)
      expect(res.headers['location']).toBeUndefined()
      expect(res.body).toEqual({ url: `${app.origin}/api/auth/signin?error=MissingCSRF`, error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
      expectNoSessionCookieWritten(res)
      expect(app.authorize).not.toHaveBeenCalled()
    })
  })

  describe('POST /signin/:provider', () => {
    const path = '/api/auth/signin/credentials'
    const fields = { callbackUrl: '/dashboard' }

    it('goes on to the sign-in page with a matching token and cookie (control)', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).type('form').send({ ...fields, csrfToken: csrf.token })
      expect(res.status).toBe(302)
      const location = new URL(res.headers['location'] as string)
      expect(location.origin).toBe(app.origin)
      expect(location.searchParams.get('error')).toBeNull()
      expect(location.searchParams.get('provider')).toBe('credentials')
    })

    it.each(FORGERIES)('is refused when %s', async (_name, forge) => {
      const [mine, theirs] = [await getCsrf(app), await getCsrf(app)]
      const res = await forgedPost(app, path, forge(mine, theirs), fields)
      expectMissingCsrfRefusal(app, res)
      expectNoSessionCookieWritten(res)
      expect(setCookie(res, CALLBACK_COOKIE)).toBeUndefined()
    })

    it('answers 200 JSON { url } with error=MissingCSRF for X-Auth-Return-Redirect: 1', async () => {
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', csrf.cookie).set('X-Auth-Return-Redirect', '1').type('form').send(fields)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ url: `${app.origin}/api/auth/signin?error=MissingCSRF`, error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
    })
  })

  describe('POST /signout', () => {
    const path = '/api/auth/signout'
    const fields = { callbackUrl: '/goodbye' }

    it('signs out with a matching token and cookie (control)', async () => {
      const { sessionCookie } = await signIn(app)
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', cookieHeader(csrf.cookie, sessionCookie)).type('form').send({ ...fields, csrfToken: csrf.token })
      expect(res.status).toBe(302)
      expect(res.headers['location']).toBe(`${app.origin}/goodbye`)
      expect(isCleared(setCookie(res, SESSION_COOKIE))).toBe(true)
      expect(onSignOut).toHaveBeenCalledTimes(1)
    })

    it.each(FORGERIES)('is refused when %s: the session cookie is kept and still works', async (_name, forge) => {
      const { sessionCookie } = await signIn(app)
      const [mine, theirs] = [await getCsrf(app), await getCsrf(app)]
      const res = await forgedPost(app, path, forge(mine, theirs), fields, [sessionCookie])
      expectMissingCsrfRefusal(app, res)
      expectNoSessionCookieWritten(res)
      expect(onSignOut).not.toHaveBeenCalled()
      const after = await me(app, sessionCookie)
      expect(after.status).toBe(200)
      expect(after.body).toMatchObject({ user: { id: USER.id, name: USER.name } })
    })

    it('answers 200 JSON { url } with error=MissingCSRF for X-Auth-Return-Redirect: 1, keeping the session', async () => {
      const { sessionCookie } = await signIn(app)
      const res = await app.http.post(path).set('Cookie', sessionCookie).set('X-Auth-Return-Redirect', '1').type('form').send(fields)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ url: `${app.origin}/api/auth/signin?error=MissingCSRF`, error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
      expectNoSessionCookieWritten(res)
      expect((await me(app, sessionCookie)).body).toMatchObject({ user: { id: USER.id } })
    })
  })

  describe('POST /session', () => {
    const path = '/api/auth/session'
    const fields = { data: { name: 'Mallory' } }

    it('updates the session with a matching token and cookie (control)', async () => {
      const { sessionCookie } = await signIn(app)
      const csrf = await getCsrf(app)
      const res = await app.http.post(path).set('Cookie', cookieHeader(csrf.cookie, sessionCookie)).send({ ...fields, csrfToken: csrf.token })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ user: { id: USER.id, name: 'Mallory' } })
      expect(sessionCookiesSet(res)).toHaveLength(1)
    })

    it.each(FORGERIES)('is refused with 403 JSON when %s, and the session is unchanged', async (_name, forge) => {
      const { sessionCookie } = await signIn(app)
      jwt.mockClear()
      const [mine, theirs] = [await getCsrf(app), await getCsrf(app)]
      const res = await forgedPost(app, path, forge(mine, theirs), fields, [sessionCookie])
      expect(res.status).toBe(403)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.body).toMatchObject({ error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
      expectNoSessionCookieWritten(res)
      expect(jwt.mock.calls.some(([params]) => params.trigger === 'update')).toBe(false)
      const after = await me(app, sessionCookie)
      expect(after.body).toMatchObject({ user: { id: USER.id, name: USER.name } })
    })

    it('is refused with 403 JSON (not a redirect) even with X-Auth-Return-Redirect: 1', async () => {
      const { sessionCookie } = await signIn(app)
      const res = await app.http.post(path).set('Cookie', sessionCookie).set('X-Auth-Return-Redirect', '1').send(fields)
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
      expectNoSessionCookieWritten(res)
    })
  })
})

/**
 * Secrets never reach the logs (DESIGN §7): with `debug: true` and a logger that records every
 * call, a whole session's life (sign-in, failed sign-in, reads, update, sign-out, tampering, a CSRF
 * failure, an authorize that throws) logs no password, secret, CSRF token or session cookie.
 */
import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { LoggerInstance } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import {
  SECRET,
  SESSION_COOKIE,
  USER,
  closeAll,
  cookieHeader,
  getCsrf,
  me,
  sessionCookiesSet,
  setCookies,
  startApp,
  type SecurityApp,
} from '../support/security-app.js'

afterAll(closeAll)

const PASSWORD = 'hunter2-secret-password'

/** Everything a log argument holds, as text: nested objects, Error messages, stacks and causes. */
function deepText(value: unknown): string {
  const seen = new Set<unknown>()
  const parts: string[] = [inspect(value, { depth: Infinity, showHidden: true, getters: true, maxArrayLength: Infinity, maxStringLength: Infinity })]
  const walk = (item: unknown): void => {
    if (item === null || typeof item !== 'object') return void parts.push(String(item))
    if (seen.has(item)) return
    seen.add(item)
    if (item instanceof Error) parts.push(item.name, item.message, item.stack ?? '')
    for (const key of Reflect.ownKeys(item)) walk((item as Record<PropertyKey, unknown>)[key])
  }
  walk(value)
  return parts.join('\n')
}

describe('the leak check itself', () => {
  it('finds a value nested in an Error cause, a non-enumerable property or a Map', () => {
    const hidden = {}
    Object.defineProperty(hidden, 'x', { value: PASSWORD, enumerable: false })
    for (const arg of [new Error('x', { cause: { deep: [PASSWORD] } }), hidden, new Map([['k', PASSWORD]]), `prefix ${PASSWORD} suffix`]) {
      expect(deepText(['code', arg])).toContain(PASSWORD)
    }
  })
})

describe('logging', () => {
  const logger = { error: jest.fn<LoggerInstance['error']>(), warn: jest.fn<LoggerInstance['warn']>(), debug: jest.fn<LoggerInstance['debug']>() }
  // Nothing may go around the logger to the console either.
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const
  const consoleSpies = consoleMethods.map((method) => jest.spyOn(console, method).mockImplementation(() => {}))
  /** Every value that must never be logged, filled in as the flows produce them. */
  const secrets = new Set<string>([PASSWORD, SECRET])
  let app: SecurityApp

  afterAll(() => consoleSpies.forEach((spy) => spy.mockRestore()))

  beforeAll(async () => {
    app = await startApp({
      config: {
        debug: true,
        logger,
        providers: [
          Credentials({
            credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
            authorize: async (credentials) => (credentials['password'] === PASSWORD ? { ...USER } : null),
          }),
          Credentials({
            id: 'flaky',
            authorize: async (credentials) => {
              // An app error that carries the submitted credentials in its cause.
              throw new Error('user lookup failed', { cause: { credentials } })
            },
          }),
        ],
        callbacks: {
          jwt: ({ token, trigger, session }) => (trigger === 'update' ? { ...token, ...(session as object) } : token),
        },
      },
    })
  })

  /** Remembers a response's cookie values (session chunks, CSRF) as secrets. */
  function remember(res: { headers: Record<string, unknown> }): void {
    for (const cookie of setCookies(res as never)) {
      if (cookie.value === '') continue
      secrets.add(cookie.value)
      // Each JWE part long enough to identify the token, and each half of the CSRF cookie.
      for (const part of cookie.value.split(/[.|]/)) if (part.length >= 22) secrets.add(part)
    }
  }

  async function csrf(): Promise<{ token: string; cookie: string }> {
    const value = await getCsrf(app)
    secrets.add(value.token)
    secrets.add(value.cookieValue)
    secrets.add(value.cookieValue.split('|')[1]!)
    return value
  }

  it('a whole session life logs no password, secret, CSRF token or session cookie', async () => {
    // Sign in.
    let token = await csrf()
    const signedIn = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', token.cookie)
      .type('form')
      .send({ csrfToken: token.token, username: 'ada', password: PASSWORD, callbackUrl: '/dashboard' })
    expect(signedIn.status).toBe(302)
    remember(signedIn)
    const sessionCookie = cookieHeader(...sessionCookiesSet(signedIn).map((cookie) => cookie.pair))
    expect(sessionCookie).toContain(SESSION_COOKIE)

    // A failed sign-in (wrong password), as JSON this time: a JSON client gets the error as JSON.
    token = await csrf()
    const failed = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', token.cookie)
      .send({ csrfToken: token.token, username: 'ada', password: `${PASSWORD}-wrong` })
    expect(failed.body).toMatchObject({ error: 'CredentialsSignin', url: expect.stringMatching(/error=CredentialsSignin/) })
    secrets.add(`${PASSWORD}-wrong`)

    // A sign-in refused by CSRF, with the password in the body.
    const refused = await app.http.post('/api/auth/callback/credentials').type('form').send({ csrfToken: 'forged', username: 'ada', password: PASSWORD })
    expect(refused.headers['location']).toMatch(/error=MissingCSRF/)

    // An authorize that throws with the credentials in its cause.
    token = await csrf()
    const flaky = await app.http
      .post('/api/auth/callback/flaky')
      .set('Cookie', token.cookie)
      .type('form')
      .send({ csrfToken: token.token, username: 'ada', password: PASSWORD })
    expect(flaky.headers['location']).toMatch(/error=Configuration/)

    // Session reads.
    expect((await me(app, sessionCookie)).body).toMatchObject({ user: { id: USER.id } })
    const read = await app.http.get('/api/auth/session').set('Cookie', sessionCookie)
    expect(read.body).toMatchObject({ user: { id: USER.id } })

    // Update.
    token = await csrf()
    const updated = await app.http
      .post('/api/auth/session')
      .set('Cookie', cookieHeader(token.cookie, sessionCookie))
      .send({ csrfToken: token.token, data: { name: 'Ada L.' } })
    expect(updated.status).toBe(200)
    remember(updated)

    // Tampered cookie.
    const tampered = sessionCookie.replace(/\.([A-Za-z0-9_-])([A-Za-z0-9_-]*)$/, (_m, first: string, rest: string) => `.${first === 'A' ? 'B' : 'A'}${rest}`)
    expect(tampered).not.toBe(sessionCookie)
    expect((await me(app, tampered)).body).toBeNull()
    expect((await app.http.get('/api/auth/session').set('Cookie', tampered)).body).toBeNull()

    // Sign-out.
    token = await csrf()
    const out = await app.http
      .post('/api/auth/signout')
      .set('Cookie', cookieHeader(token.cookie, sessionCookie))
      .type('form')
      .send({ csrfToken: token.token })
    expect(out.status).toBe(302)

    // The logger was used (debug is on, and some of the above must be logged), so the check below means something.
    expect(logger.debug).toHaveBeenCalled()
    expect(logger.error).toHaveBeenCalled()

    const calls = [
      ...(['error', 'warn', 'debug'] as const).flatMap((level) => logger[level].mock.calls.map((args) => ({ level, text: deepText(args) }))),
      ...consoleSpies.flatMap((spy, index) => spy.mock.calls.map((args) => ({ level: `console.${consoleMethods[index]}`, text: deepText(args) }))),
    ]
    expect(secrets.size).toBeGreaterThan(6)
    const leaks = calls.flatMap(({ level, text }) =>
      [...secrets].filter((secret) => text.includes(secret)).map((secret) => ({ level, secret: `${secret.slice(0, 12)}…`, text: text.slice(0, 300) })),
    )
    expect(leaks).toEqual([])
  })
})

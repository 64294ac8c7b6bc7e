/**
 * `jwt.maxSize`: a JWT session whose sealed token would exceed it (default 3 cookie chunks, 11,808
 * bytes) is refused with SessionTokenTooLargeError naming the `jwt` callback, instead of sending
 * headers that proxies reject. A sign-in fails, POST /session is refused and keeps the old cookie,
 * a plain read keeps the old cookie and the session.
 */
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { afterAll, describe, expect, it } from '@jest/globals'
import type { Response } from 'supertest'
import Portcullis, { InvalidConfigurationError, SessionTokenTooLargeError, type PortcullisConfig } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { PASSWORD, SECRET, USER, USERNAME, closeAll, cookieHeader, getCsrf, getSession, me, sessionCookiesSet, signIn, startApp, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

const DEFAULT_MAX_SIZE = 3 * (4096 - 160)
const stuffing = 'x'.repeat(20_000)

/** Every logged line at `error`, as one string each. */
const errorLines = (logger: RecordingLogger): string[] => logger.lines.filter((line) => line.level === 'error').map((line) => [line.code, ...line.message].join(' '))

/** POST /api/auth/callback/credentials with a fresh CSRF token; no check on the outcome. */
async function postSignIn(app: SecurityApp): Promise<Response> {
  const csrf = await getCsrf(app)
  return app.http.post('/api/auth/callback/credentials').set('Cookie', csrf.cookie).type('form').send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD })
}

function expectRefusedSignIn(res: Response): void {
  expect(res.status).toBe(302)
  const location = new URL(String(res.headers['location']))
  expect(location.pathname).toBe('/api/auth/error')
  expect(location.searchParams.get('error')).toBe('Configuration')
  expect(sessionCookiesSet(res)).toEqual([])
}

describe('SessionTokenTooLargeError', () => {
  it('is the server\'s fault: Configuration for the client, logged at error, naming the jwt callback and jwt.maxSize', () => {
    const error = new SessionTokenTooLargeError(27_000, DEFAULT_MAX_SIZE, 'signIn')
    expect(error.type).toBe('SessionTokenTooLarge')
    expect(error.name).toBe('SessionTokenTooLargeError')
    expect(error.clientCode).toBe('Configuration')
    expect(error.logLevel).toBe('error')
    expect(error.kind).toBe('error')
    expect([error.size, error.maxSize]).toEqual([27_000, DEFAULT_MAX_SIZE])
    expect(error.message).toMatch(/27000 bytes/)
    expect(error.message).toMatch(/jwt\.maxSize \(11808\)/)
    expect(error.message).toMatch(/`jwt` callback/)
    expect(new SessionTokenTooLargeError(27_000, DEFAULT_MAX_SIZE, 'update').message).toMatch(/trigger: 'update'/)
  })
})

describe('a sign-in whose token is too large', () => {
  it('is refused: the error page, no session cookie, an error log naming the jwt callback', async () => {
    const logger = recordingLogger()
    const app = await startApp({ config: { logger, callbacks: { jwt: ({ token, user }) => (user ? { ...token, stuffing } : token) } } })
    const res = await postSignIn(app)
    expectRefusedSignIn(res)
    // Nothing of the token goes out: no Set-Cookie header anywhere near a cookie's size.
    const headers = (res.headers['set-cookie'] as string[] | undefined) ?? []
    expect(headers.every((header) => header.length < 1000)).toBe(true)
    expect(errorLines(logger)).toEqual([expect.stringMatching(/^SessionTokenTooLarge .*over jwt\.maxSize \(11808\).*`jwt` callback/)])
  })

  it('is accepted up to jwt.maxSize exactly, whatever the codec (a custom encode)', async () => {
    const sized = (length: number): Partial<PortcullisConfig> => ({ jwt: { encode: () => 'x'.repeat(length), decode: () => null } })
    const atLimit = await postSignIn(await startApp({ config: sized(DEFAULT_MAX_SIZE) }))
    expect(atLimit.status).toBe(302)
    expect(sessionCookiesSet(atLimit).map((cookie) => cookie.name)).toEqual(['authjs.session-token.0', 'authjs.session-token.1', 'authjs.session-token.2'])
    expectRefusedSignIn(await postSignIn(await startApp({ config: { ...sized(DEFAULT_MAX_SIZE + 1), logger: recordingLogger() } })))
  })
})

describe('jwt.maxSize is configurable', () => {
  const withBlob = (blob: string, maxSize?: number): Partial<PortcullisConfig> => ({
    logger: recordingLogger(),
    jwt: maxSize === undefined ? {} : { maxSize },
    callbacks: { jwt: ({ token, user }) => (user ? { ...token, blob } : token) },
  })

  it('lower: 4000 bytes refuses a 7 KB token the default accepts', async () => {
    const blob = 'b'.repeat(5000)
    expect(sessionCookiesSet(await postSignIn(await startApp({ config: withBlob(blob) })))).toHaveLength(2)
    expectRefusedSignIn(await postSignIn(await startApp({ config: withBlob(blob, 4000) })))
  })

  it('higher: 16,000 bytes accepts a 12.5 KB token the default refuses', async () => {
    // Not much higher: Node's HTTP client, like its server, reads 16 KB of headers by default.
    const blob = 'b'.repeat(9000)
    expectRefusedSignIn(await postSignIn(await startApp({ config: withBlob(blob) })))
    const res = await postSignIn(await startApp({ config: withBlob(blob, 16_000) }))
    expect(res.status).toBe(302)
    expect(sessionCookiesSet(res)).toHaveLength(4)
  })

  it('accepts up to 10 chunks (39,360 bytes), the most the app reads back', () => {
    expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [Credentials({ authorize: async () => null })], jwt: { maxSize: 10 * 3936 } })).not.toThrow()
  })

  it.each([0, -1, 1.5, 10 * 3936 + 1, Number.NaN, Number.POSITIVE_INFINITY, '12000'])('rejects jwt.maxSize %p at init, saying what to change', (maxSize) => {
    const init = () => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [Credentials({ authorize: async () => null })], jwt: { maxSize: maxSize as number } })
    expect(init).toThrow(InvalidConfigurationError)
    expect(init).toThrow(/jwt\.maxSize must be a whole number of bytes from 1 to 39360/)
  })
})

describe('POST /session with data that makes the token too large', () => {
  it('is refused; the old session cookie is kept and still reads', async () => {
    const logger = recordingLogger()
    const app = await startApp({
      config: {
        logger,
        callbacks: {
          jwt: ({ token, trigger, session }) => (trigger === 'update' ? { ...token, note: (session as { note: string }).note } : token),
          session: ({ session, token }) => ({ ...session, note: token['note'] }),
        },
      },
    })
    const { sessionCookie, csrf } = await signIn(app)
    const update = (note: string) =>
      app.http.post('/api/auth/session').set('Cookie', cookieHeader(csrf.cookie, sessionCookie)).send({ csrfToken: csrf.token, data: { note } })

    // Control: a small update is sealed into a new cookie.
    const small = await update('small')
    expect(small.body).toMatchObject({ note: 'small' })
    expect(sessionCookiesSet(small)).toHaveLength(1)

    const huge = await update(stuffing)
    // 413 with the code, not `null`, which Auth.js's client would read as signed out.
    expect(huge.status).toBe(413)
    expect(huge.body).toMatchObject({ error: 'SessionTokenTooLarge' })
    expect(sessionCookiesSet(huge)).toEqual([])
    expect(errorLines(logger).some((line) => /SessionTokenTooLarge.*over jwt\.maxSize.*trigger: 'update'/.test(line))).toBe(true)

    const after = await getSession(app, sessionCookie)
    expect(after.body).toMatchObject({ user: { id: USER.id } })
  })
})

describe('a plain read whose jwt callback grows the token too large', () => {
  it('keeps the old cookie and the session, and logs an error', async () => {
    const logger = recordingLogger()
    let grow = false
    const app = await startApp({ config: { logger, callbacks: { jwt: ({ token }) => (grow ? { ...token, stuffing } : token) } } })
    const { sessionCookie } = await signIn(app)
    grow = true
    for (const res of [await me(app, sessionCookie), await getSession(app, sessionCookie)]) {
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ user: { id: USER.id } })
      expect(sessionCookiesSet(res)).toEqual([])
    }
    expect(errorLines(logger)).toEqual([
      expect.stringMatching(/^SessionTokenTooLarge .*`jwt` callback.*kept/),
      expect.stringMatching(/^SessionTokenTooLarge .*`jwt` callback.*kept/),
    ])
  })
})

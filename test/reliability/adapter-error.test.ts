/**
 * A database that goes away mid-run (the Knex pool destroyed, later re-initialized; a SQLite file so
 * the data outlives the pool): each request fails with the code AdapterError (503 JSON from
 * /session, the error page from a sign-in, a rejected auth() in app routes), the cause is logged
 * once, the cookie is kept, the process keeps serving, and everything works again once the database
 * is back. A custom adapter that throws plain Errors behaves the same. Sign-out during an outage:
 * signout-outage.test.ts.
 */
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import express4 from 'express4'
import knex, { type Knex } from 'knex'
import request from 'supertest'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals'
import Portcullis, {
  AdapterError,
  type Adapter,
  type AdapterSession,
  type AdapterUser,
  type LoggerInstance,
  type PortcullisConfig,
} from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import { SECRET, credentialsProvider, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'

const SESSION_COOKIE = 'authjs.session-token'

// Express 4 ends the process on an unhandled rejection; none may happen here, on either version.
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => void unhandled.push(reason)
beforeAll(() => void process.on('unhandledRejection', onUnhandled))
afterAll(() => void process.off('unhandledRejection', onUnhandled))
afterEach(() => expect(unhandled).toEqual([]))

type ExpressFactory = () => express.Express

/**
 * The app: the router, `/me` (auth(req, res), errors to `next`), `/wrapped` (auth(handler)),
 * `/guarded/*` behind the auth middleware, `/health` (no session), and an error handler that
 * answers with what it got.
 */
function createApp(adapter: Adapter, createExpress: ExpressFactory = express, config: Partial<PortcullisConfig> = {}) {
  const logger = { error: jest.fn<LoggerInstance['error']>(), warn: jest.fn<LoggerInstance['warn']>(), debug: jest.fn<LoggerInstance['debug']>() }
  const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], adapter, logger, ...config })
  const app = createExpress()
  app.use('/api/auth', handlers)
  app.get('/health', (_req, res) => void res.json({ ok: true }))
  app.get('/me', async (req, res, next) => {
    try {
      res.json(await auth(req, res))
    } catch (error) {
      next(error)
    }
  })
  app.get('/wrapped', auth((req, res) => void res.json(req.auth)))
  app.use('/guarded', auth)
  app.get('/guarded/page', (req, res) => void res.json(req.auth))
  app.use((error: Error & { type?: string; method?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(503).json({ type: error.type, method: error.method, adapterError: error instanceof AdapterError, cause: String((error.cause as Error)?.message) })
  })
  return { app, logger }
}

const sessionSetCookies = (res: { headers: Record<string, unknown> }): string[] =>
  ((res.headers['set-cookie'] as string[] | undefined) ?? []).filter((cookie) => cookie.startsWith(SESSION_COOKIE))

/** The `AdapterError` lines the logger got. */
const adapterErrorLines = (logger: { error: jest.Mock<LoggerInstance['error']> }) => logger.error.mock.calls.filter(([code]) => code === 'AdapterError')

describe('the Knex pool destroyed mid-run (SQLite file)', () => {
  let filename: string
  let db: Knex

  beforeEach(async () => {
    filename = join(tmpdir(), `portcullis-reliability-${randomBytes(6).toString('hex')}.sqlite`)
    db = knex({ client: 'better-sqlite3', connection: { filename }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    await KnexAdapter(db).createUser({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' })
  })

  afterEach(async () => {
    await db.destroy()
    await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(filename + suffix, { force: true })))
  })

  /** Signs in through `app` and returns the session cookie pair. */
  async function signedIn(app: express.Express): Promise<string> {
    const cookie = setCookie(await signInWithPassword(request.agent(app)), SESSION_COOKIE)
    expect(cookie).toMatch(/^authjs\.session-token=[0-9a-f]{64};/)
    return cookie!.split(';')[0]!
  }

  it('GET /session answers 503 JSON AdapterError and keeps the cookie, logs the cause once, and serves the session again once the database is back', async () => {
    const { app, logger } = createApp(KnexAdapter(db))
    const cookie = await signedIn(app)

    await db.destroy()
    const down = await request(app).get('/api/auth/session').set('Cookie', cookie).expect(503)
    expect(down.headers['content-type']).toMatch(/^application\/json/)
    expect(down.headers['cache-control']).toContain('no-store')
    expect(down.body).toEqual({ error: 'AdapterError', message: expect.any(String) })
    expect(sessionSetCookies(down)).toEqual([])
    expect(logger.error).toHaveBeenCalledTimes(1)
    expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('getSessionAndUser()'), expect.stringContaining('Unable to acquire a connection'))

    db.initialize()
    const up = await request(app).get('/api/auth/session').set('Cookie', cookie).expect(200)
    expect(up.body.user).toEqual({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', image: null })
  })

  it('POST /session (CSRF-checked) answers 503 JSON AdapterError while the database is down', async () => {
    const { app } = createApp(KnexAdapter(db))
    const agent = request.agent(app)
    await signInWithPassword(agent)
    const csrfToken = await fetchCsrfToken(agent)
    await db.destroy()
    const down = await agent.post('/api/auth/session').send({ csrfToken, data: { name: 'x' } }).expect(503)
    expect(down.body).toMatchObject({ error: 'AdapterError' })
    expect(sessionSetCookies(down)).toEqual([])
    db.initialize()
    expect((await agent.post('/api/auth/session').send({ csrfToken, data: {} }).expect(200)).body.user.id).toBe('user-1')
  })

  it('sends a sign-in to the error page with AdapterError, which renders with 503, and signs in once the database is back', async () => {
    const { app, logger } = createApp(KnexAdapter(db))
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)

    await db.destroy()
    const down = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'lovelace' })
    expect(down.status).toBe(302)
    expect(down.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/auth\/error\?error=AdapterError$/)
    expect(sessionSetCookies(down)).toEqual([])
    const page = await agent.get('/api/auth/error?error=AdapterError')
    expect(page.status).toBe(503)
    expect(page.text).toContain('Service unavailable')
    expect(adapterErrorLines(logger)).toEqual([['AdapterError', expect.stringContaining('getUser()'), expect.stringContaining('Unable to acquire a connection')]])
    expect(logger.error).toHaveBeenCalledTimes(1)

    db.initialize()
    const up = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'lovelace' })
    expect(up.headers.location).not.toMatch(/error=/)
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  describe.each([
    ['Express 5', express],
    ['Express 4', express4],
  ])('app routes on %s', (_name, createExpress) => {
    it('rejects auth() with an AdapterError in every form, keeps serving other routes, and works again with the same cookie', async () => {
      const { app, logger } = createApp(KnexAdapter(db), createExpress as ExpressFactory)
      const cookie = await signedIn(app)

      await db.destroy()
      for (const path of ['/me', '/wrapped', '/guarded/page']) {
        const down = await request(app).get(path).set('Cookie', cookie).expect(503)
        expect(down.body).toEqual({ type: 'AdapterError', method: 'getSessionAndUser', adapterError: true, cause: 'Unable to acquire a connection' })
        expect(sessionSetCookies(down)).toEqual([])
      }
      expect((await request(app).get('/health').expect(200)).body).toEqual({ ok: true })
      expect((await request(app).get('/me').expect(200)).body).toBeNull()
      expect(adapterErrorLines(logger)).toHaveLength(3)

      db.initialize()
      for (const path of ['/me', '/wrapped', '/guarded/page']) {
        expect((await request(app).get(path).set('Cookie', cookie).expect(200)).body.user.id).toBe('user-1')
      }
    })
  })
})

describe('a custom adapter whose methods throw plain Errors', () => {
  /** An in-memory adapter that throws `Error('connect ECONNREFUSED ...')` while `down` is set; getUser throws synchronously. */
  function flakyAdapter() {
    const state = { down: false }
    const users = new Map<string, AdapterUser>([['user-1', { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', emailVerified: null, image: null }]])
    const sessions = new Map<string, AdapterSession>()
    const check = () => {
      if (state.down) throw new Error('connect ECONNREFUSED 10.0.0.5:5432')
    }
    const adapter: Adapter = {
      getUser(id) {
        check()
        return Promise.resolve(users.get(id) ?? null)
      },
      async createSession(session) {
        check()
        sessions.set(session.sessionToken, session)
        return session
      },
      async getSessionAndUser(token) {
        check()
        const session = sessions.get(token)
        return session ? { session, user: users.get(session.userId)! } : null
      },
      async updateSession(update) {
        check()
        const session = sessions.get(update.sessionToken)
        if (session) sessions.set(update.sessionToken, { ...session, ...update })
        return session ? sessions.get(update.sessionToken)! : null
      },
      async deleteSession(token) {
        check()
        const session = sessions.get(token) ?? null
        sessions.delete(token)
        return session
      },
    }
    return { adapter, state }
  }

  it('gives the same AdapterError behaviour: 503 JSON, the error page, a rejected auth(), one log line with the cause', async () => {
    const { adapter, state } = flakyAdapter()
    const { app, logger } = createApp(adapter)
    const agent = request.agent(app)
    const cookie = setCookie(await signInWithPassword(agent), SESSION_COOKIE)!.split(';')[0]!
    // After the sign-in: a sign-in replaces the CSRF token.
    const csrfToken = await fetchCsrfToken(agent)

    state.down = true
    const session = await request(app).get('/api/auth/session').set('Cookie', cookie).expect(503)
    expect(session.body).toMatchObject({ error: 'AdapterError' })
    expect(sessionSetCookies(session)).toEqual([])
    expect(adapterErrorLines(logger)).toEqual([['AdapterError', expect.stringContaining('getSessionAndUser()'), 'Error: connect ECONNREFUSED 10.0.0.5:5432']])

    const signIn = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'lovelace' })
    expect(signIn.headers.location).toMatch(/\/api\/auth\/error\?error=AdapterError$/)
    expect(adapterErrorLines(logger)[1]).toEqual(['AdapterError', expect.stringContaining('getUser()'), 'Error: connect ECONNREFUSED 10.0.0.5:5432'])

    const me = await request(app).get('/me').set('Cookie', cookie).expect(503)
    expect(me.body).toEqual({ type: 'AdapterError', method: 'getSessionAndUser', adapterError: true, cause: 'connect ECONNREFUSED 10.0.0.5:5432' })
    expect(logger.error).toHaveBeenCalledTimes(3)
    expect((await request(app).get('/health').expect(200)).body).toEqual({ ok: true })

    state.down = false
    expect((await request(app).get('/me').set('Cookie', cookie).expect(200)).body.user.id).toBe('user-1')
  })

  // Regression: guardAdapter copied only the adapter's own enumerable properties (Object.entries),
  // so an adapter written as a class, whose methods live on its prototype, had none of them.
  it('accepts an adapter written as a class (methods on its prototype), and turns its failures into AdapterError', async () => {
    const { adapter: methods, state } = flakyAdapter()
    class ClassAdapter {
      getUser(id: string) {
        return methods.getUser!(id)
      }
      createSession(session: AdapterSession) {
        return methods.createSession!(session)
      }
      getSessionAndUser(token: string) {
        return methods.getSessionAndUser!(token)
      }
      updateSession(session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>) {
        return methods.updateSession!(session)
      }
      deleteSession(token: string) {
        return methods.deleteSession!(token)
      }
    }
    const { app, logger } = createApp(new ClassAdapter())
    const agent = request.agent(app)
    expect(setCookie(await signInWithPassword(agent), SESSION_COOKIE)).toMatch(/^authjs\.session-token=[0-9a-f]{64};/)
    expect((await agent.get('/me').expect(200)).body.user.id).toBe('user-1')
    state.down = true
    expect((await agent.get('/api/auth/session').expect(503)).body).toMatchObject({ error: 'AdapterError' })
    expect(adapterErrorLines(logger)).toHaveLength(1)
  })
})

/**
 * Issue 69: a store that stops answering without failing (Redis under `CLIENT PAUSE … ALL`, a
 * PostgreSQL table locked by another connection) must not hold the requests that need it. Under
 * concurrent load: a known session's read answers 200 within the read timeout, a session the process
 * has not seen a 503 from Express's default handler, a sign-in its answer, all before the pause ends
 * (a pause many times longer than the bound), with no request left pending; 200 again once the
 * store answers. A database outage (a lock, then every connection killed) reaches Express's default
 * handler as a 503, never a 500.
 */
import type { Server } from 'node:http'
import express from 'express'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { Redis } from 'ioredis'
import Portcullis, { AdapterError, RateLimitedError, type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { listenApp } from '../support/app-rig.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { describeWithOwnRedis } from '../support/redis.js'

const SESSION_COOKIE = 'authjs.session-token'
/** Far longer than every bound under test (reads 250 ms, writes and the rate limit 1000 ms). */
const PAUSE_MS = 5000
const quiet = { error: () => {}, warn: () => {}, debug: () => {} }
const anyone = Credentials({ authorize: async ({ username }) => ({ id: `user-${String(username)}`, name: String(username) }) })

/** Requests sent and not answered yet. */
let pending = 0
function send(url: string, init: RequestInit = {}): Promise<Response> {
  pending++
  return fetch(url, { redirect: 'manual', ...init }).finally(() => pending--)
}

interface RunningApp {
  readonly origin: string
  close(): Promise<void>
}
const running: Server[] = []
// Express's default handler logs each error it answers (outside NODE_ENV=test, as here).
beforeAll(() => void jest.spyOn(console, 'error').mockImplementation(() => {}))
afterAll(async () => {
  await Promise.all(running.map((server) => new Promise((resolve) => server.close(resolve))))
})

/** An app whose `/me` passes auth()'s errors to Express's default handler (production: no detail). */
async function startApp(config: Partial<PortcullisConfig>): Promise<RunningApp> {
  const { handlers, auth } = Portcullis({ secret: SECRET, trustHost: true, providers: [anyone], logger: quiet, ...config })
  const app = express()
  app.set('env', 'production')
  app.use('/api/auth', handlers)
  app.get('/me', async (req, res, next) => {
    try {
      const session = await auth(req, res)
      res.status(session ? 200 : 401).json(session)
    } catch (error) {
      next(error)
    }
  })
  app.get('/limited', (_req, _res, next) => next(new RateLimitedError(30, 'ip')))
  const { server, origin } = await listenApp(app)
  running.push(server)
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

function cookieOf(response: Response, name: string): string | undefined {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`))
  return line?.split(';')[0]
}

/** The CSRF token and its cookie (no store involved). */
async function csrf(app: RunningApp): Promise<{ token: string; cookie: string }> {
  const response = await send(`${app.origin}/api/auth/csrf`)
  return { token: ((await response.json()) as { csrfToken: string }).csrfToken, cookie: cookieOf(response, 'authjs.csrf-token')! }
}

/** A credentials sign-in: where it sends the browser (JSON `{ url }`) and the session cookie it sets. */
async function signIn(app: RunningApp, username: string, check?: { token: string; cookie: string }): Promise<{ url: string; session: string | undefined }> {
  const { token, cookie } = check ?? (await csrf(app))
  const response = await send(`${app.origin}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-auth-return-redirect': '1', cookie },
    body: new URLSearchParams({ csrfToken: token, username }).toString(),
  })
  return { url: ((await response.json()) as { url: string }).url, session: cookieOf(response, SESSION_COOKIE) }
}

async function read(app: RunningApp, session: string): Promise<{ status: number; body: string }> {
  const response = await send(`${app.origin}/me`, { headers: { cookie: session } })
  return { status: response.status, body: await response.text() }
}

/** Reads until every session answers 200 (the store is back), for at most 15 s. */
async function until200(app: RunningApp, sessions: readonly string[]): Promise<number[]> {
  const stopAt = Date.now() + 15_000
  for (;;) {
    const statuses = await Promise.all(sessions.map(async (session) => (await read(app, session)).status))
    if (statuses.every((status) => status === 200) || Date.now() > stopAt) return statuses
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** `CLIENT PAUSE ms ALL` from its own connection; resolves with when the pause ends. */
async function pauseRedis(pauser: Redis, ms: number): Promise<number> {
  const endsAt = Date.now() + ms
  await pauser.call('CLIENT', 'PAUSE', String(ms), 'ALL')
  return endsAt
}

describe('errors for Express', () => {
  it('gives AdapterError 503 and RateLimitedError 429 with Retry-After, for the default handler and others', async () => {
    const error = new AdapterError('getSessionAndUser', { cause: new Error('down') })
    expect([error.status, error.statusCode, error.expose]).toEqual([503, 503, false])
    const limited = new RateLimitedError(30, 'ip')
    expect([limited.status, limited.statusCode, limited.expose, limited.headers]).toEqual([429, 429, false, { 'Retry-After': '30' }])
    const app = await startApp({})
    const response = await send(`${app.origin}/limited`)
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('30')
    expect(await response.text()).not.toContain('sign-in attempts')
  })
})

// A server of its own: a pause of the shared one would stall every other suite's Redis meanwhile.
await describeWithOwnRedis('a Redis store that stops answering (CLIENT PAUSE ALL)', (redis) => {
  afterAll(() => redis.cleanUp())
  let pauser: Redis

  beforeAll(() => {
    pauser = redis.connect()
  })

  it('answers known sessions 200 and unseen ones 503 before the pause ends, none left pending, and 200 after', async () => {
    const keyPrefix = redis.uniqueKeyPrefix()
    const config = (): Partial<PortcullisConfig> => ({ session: { strategy: 'jwt', store: { redis: redis.connect(), keyPrefix }, revocationCacheSeconds: 1 } })
    const app = await startApp(config())
    // Another process, sharing the store: its sign-ins are sessions this one has not seen.
    const other = await startApp(config())
    const known = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await signIn(app, `known-${i}`)).session!))
    const unseen = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await signIn(other, `unseen-${i}`)).session!))
    for (const { status } of await Promise.all(known.map((session) => read(app, session)))) expect(status).toBe(200)
    // Past revocationCacheSeconds: every read of the pause is due to ask the store.
    await new Promise((resolve) => setTimeout(resolve, 1100))

    const endsAt = await pauseRedis(pauser, PAUSE_MS)
    const [knownReads, unseenReads] = await Promise.all([
      Promise.all(known.map(async (session) => [await read(app, session), await read(app, session), await read(app, session)])),
      Promise.all(unseen.map((session) => read(app, session))),
    ])
    const answeredAt = Date.now()
    expect(pending).toBe(0)
    expect(answeredAt).toBeLessThan(endsAt)
    expect(knownReads.flat().map(({ status }) => status)).toEqual(Array(60).fill(200))
    expect(knownReads[0]![0]!.body).toContain('user-known-0')
    expect(unseenReads.map(({ status }) => status)).toEqual(Array(5).fill(503))
    // Express's default handler, in production, says no more than the status.
    for (const { body } of unseenReads) expect(body).not.toMatch(/session store|AdapterError|Redis/)

    // Blocked until the pause ends, as every client is.
    await redis.connect().ping()
    expect(await until200(app, [...known, ...unseen])).toEqual(Array(25).fill(200))
  }, 30_000)

  it('answers sign-ins with the rate-limit store paused: counted in memory without a session store, refused with AdapterError with one', async () => {
    const counted = await startApp({ rateLimit: { store: { redis: redis.connect() }, keyPrefix: redis.uniqueKeyPrefix() } })
    const recorded = await startApp({
      rateLimit: { store: { redis: redis.connect() }, keyPrefix: redis.uniqueKeyPrefix() },
      session: { strategy: 'jwt', store: { redis: redis.connect(), keyPrefix: redis.uniqueKeyPrefix() } },
    })
    // The CSRF tokens first (no store), then the pause.
    const checks = await Promise.all([...Array(10).keys()].map((i) => csrf(i < 5 ? counted : recorded)))
    const endsAt = await pauseRedis(pauser, PAUSE_MS)
    const answers = await Promise.all(checks.map((check, i) => signIn(i < 5 ? counted : recorded, `signer-${i}`, check)))
    expect(Date.now()).toBeLessThan(endsAt)
    expect(pending).toBe(0)
    for (const answer of answers.slice(0, 5)) {
      expect(answer.url).not.toContain('error=')
      expect(answer.session).toBeDefined()
    }
    for (const answer of answers.slice(5)) {
      expect(new URL(answer.url).searchParams.get('error')).toBe('AdapterError')
      expect(answer.session).toBeUndefined()
    }
    await redis.connect().ping()
    const after = await signIn(recorded, 'after-the-pause')
    expect(after.url).not.toContain('error=')
    expect(await until200(recorded, [after.session!])).toEqual([200])
  }, 30_000)
})

await describeWithDatabase('postgres', 'a PostgreSQL database that stops answering', (server) => {
  let db: TestDatabase
  let other: Knex
  beforeAll(async () => {
    db = await server.createDatabase()
    await db.knex.migrate.latest({ migrationSource: migrationSource() })
    // Another client of the same database: it holds the lock and kills the app's connections.
    other = knex(db.config)
  })
  afterAll(async () => {
    await other?.destroy()
    await db?.destroy()
  })

  it('answers database sessions 503, never 500, while a lock holds their table and when the connections are killed; 200 after', async () => {
    const users = Array.from({ length: 10 }, (_, i) => ({ id: `user-db-${i}`, name: `db-${i}`, email: `db-${i}@example.com` }))
    await db.knex('User').insert(users)
    const app = await startApp({ adapter: KnexAdapter(db.knex), session: { strategy: 'database' } })
    const sessions = await Promise.all(users.map(async ({ name }) => (await signIn(app, name)).session!))
    expect(await until200(app, sessions)).toEqual(Array(10).fill(200))

    const lock = await other.transaction()
    await lock.raw('lock table "Session" in access exclusive mode')
    let released = false
    try {
      const reads = await Promise.all(sessions.flatMap((session) => [read(app, session), read(app, session)]))
      released = lock.isCompleted()
      expect(pending).toBe(0)
      expect(reads.map(({ status }) => status)).toEqual(Array(20).fill(503))
      for (const { body } of reads) expect(body).not.toMatch(/getSessionAndUser|AdapterError|Session/)
    } finally {
      await lock.commit()
    }
    // Answered while the lock still held.
    expect(released).toBe(false)
    expect(await until200(app, sessions)).toEqual(Array(10).fill(200))

    await other.raw('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
    const afterKill = await Promise.all(sessions.map((session) => read(app, session)))
    expect(pending).toBe(0)
    for (const { status } of afterKill) expect([200, 503]).toContain(status)
    expect(await until200(app, sessions)).toEqual(Array(10).fill(200))
  }, 60_000)

  it('lets known JWT sessions of a Knex store in and answers unseen ones 503 while the store table is locked', async () => {
    const config = (): Partial<PortcullisConfig> => ({ session: { strategy: 'jwt', store: { knex: db.knex }, revocationCacheSeconds: 1 } })
    const app = await startApp(config())
    const elsewhere = await startApp(config())
    const known = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await signIn(app, `pg-known-${i}`)).session!))
    const unseen = await Promise.all(Array.from({ length: 3 }, async (_, i) => (await signIn(elsewhere, `pg-unseen-${i}`)).session!))
    expect(await until200(app, known)).toEqual(Array(10).fill(200))
    await new Promise((resolve) => setTimeout(resolve, 1100))

    const lock = await other.transaction()
    await lock.raw('lock table portcullis_session_store in access exclusive mode')
    try {
      const [knownReads, unseenReads] = await Promise.all([Promise.all(known.map((session) => read(app, session))), Promise.all(unseen.map((session) => read(app, session)))])
      expect(pending).toBe(0)
      expect(lock.isCompleted()).toBe(false)
      expect(knownReads.map(({ status }) => status)).toEqual(Array(10).fill(200))
      expect(unseenReads.map(({ status }) => status)).toEqual(Array(3).fill(503))
    } finally {
      await lock.commit()
    }
    expect(await until200(app, [...known, ...unseen])).toEqual(Array(13).fill(200))
  }, 60_000)
})

/**
 * Attacks on database sessions (DESIGN §8): session fixation with a planted token (one the
 * attacker holds a session for, and an arbitrary one), replay of a signed-out token, reviving an
 * expired session through POST /session, one user's token reaching another's session, and session
 * tokens in the logs (DESIGN §7), also when the database fails. Cookies are sent by hand.
 */
import { inspect } from 'node:util'
import knex, { type Knex } from 'knex'
import { afterAll, afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import type { LoggerInstance, PortcullisConfig, User } from 'portcullis'
import { KnexAdapter, migrationSource, type KnexAdapterInstance } from 'portcullis/adapters/knex'
import {
  PASSWORD,
  SESSION_COOKIE,
  closeAll,
  cookieHeader,
  getCsrf,
  getSession,
  isCleared,
  me,
  sessionCookiesSet,
  setCookie,
  setCookies,
  startApp,
  type AuthorizeMock,
  type SecurityApp,
} from '../support/security-app.js'

afterAll(closeAll)

const ADA = { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' }
const MALLORY = { id: 'user-2', name: 'Mallory', email: 'mallory@example.com' }

/** Accepts `ada` and `mallory`, both with PASSWORD. */
const twoUsers = (): AuthorizeMock =>
  jest.fn(async (credentials: Record<string, unknown>): Promise<User | null> => {
    if (credentials['password'] !== PASSWORD) return null
    return credentials['username'] === 'ada' ? { ...ADA } : credentials['username'] === 'mallory' ? { ...MALLORY } : null
  })

let db: Knex
let adapter: KnexAdapterInstance

beforeEach(async () => {
  db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
  adapter = KnexAdapter(db)
  await adapter.createUser(ADA)
  await adapter.createUser(MALLORY)
})

afterEach(() => db.destroy())

function startDatabaseApp(config: Partial<PortcullisConfig> = {}): Promise<SecurityApp> {
  return startApp({ config: { adapter, ...config }, authorize: twoUsers() })
}

const pair = (token: string): string => `${SESSION_COOKIE}=${token}`
const tokens = async (): Promise<string[]> => (await db('Session').pluck('sessionToken')) as string[]

/**
 * A credentials sign-in as `username`, sending `planted` (Cookie pairs already in the browser)
 * with the CSRF request and the callback. Resolves with the new session token.
 */
async function signInAs(app: SecurityApp, username: 'ada' | 'mallory', ...planted: string[]): Promise<string> {
  const csrf = await getCsrf(app)
  const res = await app.http
    .post('/api/auth/callback/credentials')
    .set('Cookie', cookieHeader(csrf.cookie, ...planted))
    .type('form')
    .send({ csrfToken: csrf.token, username, password: PASSWORD })
  expect(res.status).toBe(302)
  const session = sessionCookiesSet(res)
  expect(session.map((cookie) => cookie.name)).toEqual([SESSION_COOKIE])
  return session[0]!.value
}

/** A CSRF-checked POST (sign-out, session update) carrying the session token. */
async function postWithSession(app: SecurityApp, path: string, token: string, body: Record<string, unknown> = {}) {
  const csrf = await getCsrf(app)
  return app.http
    .post(path)
    .set('Cookie', cookieHeader(csrf.cookie, pair(token)))
    .send({ csrfToken: csrf.token, ...body })
}

async function expectNoSession(app: SecurityApp, token: string): Promise<void> {
  for (const res of [await me(app, pair(token)), await getSession(app, pair(token))]) {
    expect(res.status).toBe(200)
    expect(res.body).toBeNull()
    expect(isCleared(setCookie(res, SESSION_COOKIE))).toBe(true)
  }
}

describe('session fixation', () => {
  it('a planted token of the attacker’s own session: the victim gets a new token, the planted row is deleted and gives nobody a session', async () => {
    const app = await startDatabaseApp()
    const attackers = await signInAs(app, 'mallory')
    expect((await me(app, pair(attackers))).body.user.id).toBe(MALLORY.id)

    const victims = await signInAs(app, 'ada', pair(attackers))
    expect(victims).not.toBe(attackers)
    expect(await tokens()).toEqual([victims])
    await expectNoSession(app, attackers)
    expect((await me(app, pair(victims))).body.user.id).toBe(ADA.id)
  })

  it('an arbitrary planted token: the victim gets a new token and the planted one never becomes a session', async () => {
    const app = await startDatabaseApp()
    for (const planted of ['f'.repeat(64), 'attacker-chosen-token']) {
      const victims = await signInAs(app, 'ada', pair(planted))
      expect(victims).not.toBe(planted)
      expect(await tokens()).not.toContain(planted)
      await expectNoSession(app, planted)
      expect((await me(app, pair(victims))).body.user.id).toBe(ADA.id)
    }
  })

  it('a token planted as a chunk cookie is deleted and the chunk cleared', async () => {
    const app = await startDatabaseApp()
    const attackers = await signInAs(app, 'mallory')
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', cookieHeader(csrf.cookie, `${SESSION_COOKIE}.0=${attackers}`))
      .type('form')
      .send({ csrfToken: csrf.token, username: 'ada', password: PASSWORD })
    const victims = setCookie(res, SESSION_COOKIE)!.value
    expect(victims).not.toBe(attackers)
    expect(isCleared(setCookie(res, `${SESSION_COOKIE}.0`))).toBe(true)
    expect(await tokens()).toEqual([victims])
  })
})

describe('replay and revival', () => {
  it('a token of a signed-out session cannot be replayed, to read or to update', async () => {
    const app = await startDatabaseApp()
    const token = await signInAs(app, 'ada')
    const out = await postWithSession(app, '/api/auth/signout', token)
    expect(out.status).toBe(302)
    expect(isCleared(setCookie(out, SESSION_COOKIE))).toBe(true)

    await expectNoSession(app, token)
    const update = await postWithSession(app, '/api/auth/session', token, { data: { name: 'Mallory' } })
    expect(update.status).toBe(200)
    expect(update.body).toBeNull()
    expect(sessionCookiesSet(update)).toEqual([])
    expect(await tokens()).toEqual([])
  })

  it('an expired session cannot be revived by POST /session', async () => {
    const app = await startDatabaseApp()
    const token = await signInAs(app, 'ada')
    await db('Session').where({ sessionToken: token }).update({ expires: new Date(Date.now() - 1000) })

    const update = await postWithSession(app, '/api/auth/session', token, { data: {} })
    expect(update.status).toBe(200)
    expect(update.body).toBeNull()
    expect(isCleared(setCookie(update, SESSION_COOKIE))).toBe(true)
    expect(await tokens()).toEqual([])
    await expectNoSession(app, token)
  })

  it('an expired session cannot be revived once the clock has passed its expiry', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start)
    try {
      const app = await startDatabaseApp({ session: { maxAge: 3600, updateAge: 0 } })
      const token = await signInAs(app, 'ada')
      clock.mockReturnValue(start + 3600_000)
      const update = await postWithSession(app, '/api/auth/session', token, { data: {} })
      expect(update.body).toBeNull()
      expect(sessionCookiesSet(update)).toEqual([])
      expect(await tokens()).toEqual([])
    } finally {
      clock.mockRestore()
    }
  })
})

describe('one user’s token never gives another’s session', () => {
  it('each token gives its own user; variants of a token give nobody', async () => {
    const session = jest.fn(({ session, user }: { session: { user: object }; user: { id: string } }) => ({ ...session, rowUser: user.id }))
    const app = await startDatabaseApp({ callbacks: { session: session as never } })
    const ada = await signInAs(app, 'ada')
    const mallory = await signInAs(app, 'mallory')

    expect((await me(app, pair(ada))).body).toMatchObject({ user: { id: ADA.id, email: ADA.email }, rowUser: ADA.id })
    expect((await getSession(app, pair(mallory))).body).toMatchObject({ user: { id: MALLORY.id, email: MALLORY.email }, rowUser: MALLORY.id })

    const variants = [
      ada.toUpperCase(),
      ada.slice(0, -1),
      `${ada}0`,
      `${ada.slice(0, 32)}%`,
      '%',
      "' OR '1'='1",
      `${mallory.slice(0, 32)}${ada.slice(32)}`,
    ]
    for (const variant of variants) {
      const res = await me(app, pair(encodeURIComponent(variant)))
      expect(res.body).toBeNull()
    }
    expect((await tokens()).sort()).toEqual([ada, mallory].sort())
  })
})

describe('session tokens never reach the logs', () => {
  const logger = { error: jest.fn<LoggerInstance['error']>(), warn: jest.fn<LoggerInstance['warn']>(), debug: jest.fn<LoggerInstance['debug']>() }
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const
  let consoleSpies: { mock: { calls: unknown[][] }; mockRestore(): void }[] = []

  beforeEach(() => {
    for (const level of ['error', 'warn', 'debug'] as const) logger[level].mockClear()
    consoleSpies = consoleMethods.map((method) => jest.spyOn(console, method).mockImplementation(() => {}))
  })
  afterEach(() => consoleSpies.forEach((spy) => spy.mockRestore()))

  /** Every logger and console call, as text (nested values, Error messages, stacks and causes). */
  function logText(): string[] {
    const deep = (value: unknown): string => {
      const parts = [inspect(value, { depth: Infinity, showHidden: true, maxStringLength: Infinity })]
      const seen = new Set<unknown>()
      const walk = (item: unknown): void => {
        if (item === null || typeof item !== 'object' || seen.has(item)) return void (typeof item === 'string' && parts.push(item))
        seen.add(item)
        if (item instanceof Error) parts.push(item.message, item.stack ?? '')
        for (const key of Reflect.ownKeys(item)) walk((item as Record<PropertyKey, unknown>)[key])
      }
      walk(value)
      return parts.join('\n')
    }
    return [
      ...(['error', 'warn', 'debug'] as const).flatMap((level) => logger[level].mock.calls.map((args) => `${level}: ${deep(args)}`)),
      ...consoleSpies.flatMap((spy) => spy.mock.calls.map((args) => `console: ${deep(args)}`)),
    ]
  }

  function leaksOf(secrets: Iterable<string>): { secret: string; line: string }[] {
    const lines = logText()
    return [...secrets].flatMap((secret) => lines.filter((line) => line.includes(secret)).map((line) => ({ secret: `${secret.slice(0, 12)}…`, line: line.slice(0, 300) })))
  }

  it('a whole database session life, with debug on, logs no session token', async () => {
    const app = await startDatabaseApp({ debug: true, logger, session: { updateAge: 0 } })
    const seen = new Set<string>()
    const attackers = await signInAs(app, 'mallory')
    const planted = 'e'.repeat(64)
    seen.add(attackers).add(planted)
    const ada = await signInAs(app, 'ada', pair(attackers))
    seen.add(ada)
    seen.add(await signInAs(app, 'ada', pair(planted)))
    expect((await me(app, pair(ada))).body.user.id).toBe(ADA.id)
    expect((await getSession(app, pair(ada))).body.user.id).toBe(ADA.id)
    for (const cookie of setCookies(await postWithSession(app, '/api/auth/session', ada, { data: { name: 'A' } }))) if (cookie.value) seen.add(cookie.value)
    expect((await postWithSession(app, '/api/auth/signout', ada)).status).toBe(302)
    await expectNoSession(app, ada)

    const expired = await signInAs(app, 'ada')
    seen.add(expired)
    await db('Session').where({ sessionToken: expired }).update({ expires: new Date(Date.now() - 1000) })
    await expectNoSession(app, expired)

    // A session callback that throws (GET /session logs it) while holding a valid token.
    const failing = await startDatabaseApp({ debug: true, logger, callbacks: { session: () => Promise.reject(new Error('session callback failed')) } })
    const other = await signInAs(failing, 'ada')
    seen.add(other)
    expect((await getSession(failing, pair(other))).body).toBeNull()
    expect(logger.error).toHaveBeenCalledWith('SessionError', expect.stringContaining('session callback failed'))

    // A refused sign-in (logged at debug level) with a session cookie in the browser.
    const csrf = await getCsrf(app)
    const refused = await app.http
      .post('/api/auth/callback/credentials')
      .set('Cookie', cookieHeader(csrf.cookie, pair(planted)))
      .type('form')
      .send({ csrfToken: csrf.token, username: 'ada', password: 'wrong' })
    expect(refused.headers['location']).toMatch(/error=CredentialsSignin/)

    expect(logger.debug).toHaveBeenCalled()
    expect(leaksOf(seen)).toEqual([])
  })

  it('logs no session token when the database cannot be reached (AdapterError)', async () => {
    const app = await startDatabaseApp({ debug: true, logger })
    const token = await signInAs(app, 'ada')
    await db.destroy()
    try {
      expect((await getSession(app, pair(token))).status).toBe(503)
      // The sign-out fails (a JSON client is answered 503, AdapterError) while its deleteSession failure is logged.
      expect((await postWithSession(app, '/api/auth/signout', token)).status).toBe(503)
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('deleteSession'), expect.any(String))
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('getSessionAndUser'), expect.any(String))
      expect(leaksOf([token])).toEqual([])
    } finally {
      db.initialize()
    }
  })

  // Knex puts the SQL, with its bound values interpolated, in the message of a failed query
  // ("select ... where `Session`.`sessionToken` = '<token>' - no such table: Session"), and
  // guardAdapter logs that message as the AdapterError's cause.
  it('logs no session token when a session query fails (knex interpolates bindings into its error message)', async () => {
    const app = await startDatabaseApp({ debug: true, logger })
    const token = await signInAs(app, 'ada')
    await db.schema.renameTable('Session', 'SessionMoved')
    try {
      expect((await getSession(app, pair(token))).status).toBe(503)
      // The sign-out fails (a JSON client is answered 503, AdapterError) while its deleteSession failure is logged.
      expect((await postWithSession(app, '/api/auth/signout', token)).status).toBe(503)
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('deleteSession'), expect.any(String))
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('getSessionAndUser'), expect.stringContaining('no such table'))
      expect(leaksOf([token])).toEqual([])
    } finally {
      await db.schema.renameTable('SessionMoved', 'Session')
    }
  })
})

/**
 * Database sessions end to end, through the router and auth(req, res), with KnexAdapter on SQLite
 * in memory: the cookie holds only the row's token; a read costs one query until updateAge has
 * passed; maxAge, expiry, sign-out, the callbacks and events; the choice of strategy; credentials
 * sign-in with database sessions, through the router and the server-side signIn / signOut.
 */
import { randomUUID } from 'node:crypto'
import express from 'express'
import express4 from 'express4'
import knex, { type Knex } from 'knex'
import request from 'supertest'
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import Portcullis, { CredentialsSignin, type EventsOptions, type LoggerInstance, type PortcullisConfig, type Session, type SessionCallbackParams } from 'portcullis'
import { KnexAdapter, migrationSource, type KnexAdapterInstance } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { SECRET, createTestApp, credentialsProvider, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

const SESSION_COOKIE = 'authjs.session-token'
const HOUR = 3600_000
const DAY = 24 * HOUR
const START = Date.UTC(2026, 10, 20, 12)

interface TestDatabase {
  db: Knex
  adapter: KnexAdapterInstance
  /** The SQL of every query since the last `queries.length = 0`. */
  queries: string[]
}

const databases: Knex[] = []
let clock: ReturnType<typeof jest.spyOn> | undefined

/** Freezes `Date.now()` (what the session code reads); knex and supertest keep real timers. */
function setNow(ms: number) {
  clock?.mockRestore()
  clock = jest.spyOn(Date, 'now').mockReturnValue(ms)
}

afterEach(async () => {
  clock?.mockRestore()
  clock = undefined
  await Promise.all(databases.splice(0).map((db) => db.destroy()))
})

/** A fresh in-memory database with the adapter's tables and Ada (`user-1`). */
async function createDatabase(): Promise<TestDatabase> {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  databases.push(db)
  await db.migrate.latest({ migrationSource: migrationSource() })
  const adapter = KnexAdapter(db)
  await adapter.createUser({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' })
  const queries: string[] = []
  db.on('query', (query: { sql: string }) => queries.push(query.sql))
  return { db, adapter, queries }
}

/** Every session row, expiry as a Date. */
async function sessionRows(db: Knex): Promise<{ sessionToken: string; userId: string; expires: Date }[]> {
  const rows = (await db('Session').select('sessionToken', 'userId', 'expires')) as { sessionToken: string; userId: string; expires: number }[]
  return rows.map((row) => ({ ...row, expires: new Date(Number(row.expires)) }))
}

/** The value of a `Set-Cookie` header (`name=value; ...`). */
function cookieValue(header: string | undefined): string | undefined {
  return header?.split(';')[0]!.split('=').slice(1).join('=')
}

/** The `Expires` attribute of a `Set-Cookie` header, in ms. */
function cookieExpires(header: string | undefined): number | undefined {
  const match = /; Expires=([^;]+)/.exec(header ?? '')
  return match ? Date.parse(match[1]!) : undefined
}

const isCleared = (header: string | undefined): boolean => header !== undefined && /^authjs\.session-token=; Max-Age=0;/.test(header)

/** Ada's session, as auth() and GET /session give it with the default session callback. */
const adaSession = (expires: Date | number) => ({
  user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', image: null },
  expires: new Date(expires).toISOString(),
})

describe.each([
  ['Express 5', express],
  ['Express 4', express4],
])('database sessions on %s', (_name, createExpress) => {
  it('signs in with a row whose token is the whole cookie, serves it to auth() and /session, and signs out', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter }, createExpress as () => express.Express)
    const agent = request.agent(app)
    expect((await agent.get('/me').expect(200)).body).toBeNull()

    const callback = await signInWithPassword(agent, { username: 'ada', password: 'lovelace', callbackUrl: '/dashboard' })
    expect(callback.status).toBe(302)
    expect(new URL(callback.headers.location!).pathname).toBe('/dashboard')
    const header = setCookie(callback, SESSION_COOKIE)
    expect(header).toMatch(/^authjs\.session-token=[0-9a-f]{64}; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/)
    const token = cookieValue(header)!

    const rows = await sessionRows(db)
    expect(rows).toEqual([{ sessionToken: token, userId: 'user-1', expires: expect.any(Date) }])
    const expires = rows[0]!.expires
    expect(cookieExpires(header)).toBe(expires.getTime())
    expect(expires.getTime() - Date.now()).toBeGreaterThan(29 * DAY)
    // Only the token travels: no other cookie of the response carries it or any session data.
    const others = ((callback.headers['set-cookie'] as unknown as string[]) ?? []).filter((cookie) => !cookie.startsWith(`${SESSION_COOKIE}=`))
    expect(others.filter((cookie) => cookie.includes(token) || cookie.includes('user-1'))).toEqual([])

    expect((await agent.get('/me').expect(200)).body).toEqual(adaSession(expires))
    const session = await agent.get('/api/auth/session').expect(200)
    expect(session.headers['cache-control']).toContain('no-store')
    expect(session.body).toEqual(adaSession(expires))

    const csrfToken = await fetchCsrfToken(agent)
    const signOut = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/bye' })
    expect(signOut.status).toBe(302)
    expect(new URL(signOut.headers.location!).pathname).toBe('/bye')
    expect(isCleared(setCookie(signOut, SESSION_COOKIE))).toBe(true)
    expect(await sessionRows(db)).toEqual([])
    expect((await agent.get('/me').expect(200)).body).toBeNull()
    expect((await agent.get('/api/auth/session').expect(200)).body).toBeNull()
  })

  it('issues a new token on every sign-in and deletes the browser’s previous row', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter }, createExpress as () => express.Express)
    const agent = request.agent(app)
    const first = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    const second = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    expect(second).toMatch(/^[0-9a-f]{64}$/)
    expect(second).not.toBe(first)
    expect((await sessionRows(db)).map((row) => row.sessionToken)).toEqual([second])
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('an expired row is no session, to the device list (which only peeks at it) as to auth()', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter }, createExpress as () => express.Express)
    const agent = request.agent(app)
    await signInWithPassword(agent)
    await agent.get('/api/auth/sessions/list').expect(200)
    await db('Session').update({ expires: new Date(Date.now() - 1000) })
    await agent.get('/api/auth/sessions/list').expect(401)
    expect((await agent.get('/me').expect(200)).body).toBeNull()
  })
})

describe('one query per read', () => {
  it('reads the session and its user in exactly one query when updateAge has not passed, however often auth() is called', async () => {
    const { adapter, queries } = await createDatabase()
    const { app, auth } = createTestApp({ adapter })
    app.get('/twice', async (req, res) => {
      const first = await auth(req, res)
      const second = await auth({ req, res })
      res.json({ same: first === second, id: first?.user.id })
    })
    const agent = request.agent(app)
    await signInWithPassword(agent)

    for (const path of ['/me', '/api/auth/session', '/twice']) {
      queries.length = 0
      const response = await agent.get(path).expect(200)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      expect(queries).toHaveLength(1)
      expect(queries[0]).toMatch(/^select .* from `Session` inner join `User`/)
    }
    expect((await agent.get('/twice')).body).toEqual({ same: true, id: 'user-1' })
  })

  it('costs no query without a session cookie', async () => {
    const { adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter })
    queries.length = 0
    expect((await request(app).get('/me').expect(200)).body).toBeNull()
    expect((await request(app).get('/api/auth/session').expect(200)).body).toBeNull()
    expect(queries).toEqual([])
  })
})

describe('updateAge and maxAge', () => {
  it('writes nothing before updateAge, then extends the row and re-issues the cookie once it has passed', async () => {
    setNow(START)
    const { db, adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { maxAge: 30 * 24 * 3600, updateAge: 24 * 3600 } })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    const signedIn = new Date(START + 30 * DAY)
    expect((await sessionRows(db))[0]!.expires).toEqual(signedIn)

    setNow(START + 23 * HOUR)
    queries.length = 0
    const early = await agent.get('/me').expect(200)
    expect(early.body).toEqual(adaSession(signedIn))
    expect(setCookie(early, SESSION_COOKIE)).toBeUndefined()
    expect(queries.filter((sql) => /^update/i.test(sql))).toEqual([])
    expect((await sessionRows(db))[0]!.expires).toEqual(signedIn)

    setNow(START + 25 * HOUR)
    const extended = new Date(START + 25 * HOUR + 30 * DAY)
    queries.length = 0
    const due = await agent.get('/me').expect(200)
    expect(due.body).toEqual(adaSession(extended))
    const header = setCookie(due, SESSION_COOKIE)
    expect(cookieValue(header)).toBe((await sessionRows(db))[0]!.sessionToken)
    expect(cookieExpires(header)).toBe(extended.getTime())
    expect(queries.filter((sql) => /^update `Session`/i.test(sql))).toHaveLength(1)
    expect((await sessionRows(db))[0]!.expires).toEqual(extended)

    // The next updateAge is counted from the extension.
    setNow(START + 26 * HOUR)
    queries.length = 0
    const later = await agent.get('/api/auth/session').expect(200)
    expect(later.body.expires).toBe(extended.toISOString())
    expect(setCookie(later, SESSION_COOKIE)).toBeUndefined()
    expect(queries).toHaveLength(1)
  })

  it('writes on every access with updateAge: 0', async () => {
    const { adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { updateAge: 0 } })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    for (const path of ['/me', '/me', '/api/auth/session']) {
      queries.length = 0
      const response = await agent.get(path).expect(200)
      expect(response.body.user.id).toBe('user-1')
      expect(setCookie(response, SESSION_COOKIE)).toMatch(/^authjs\.session-token=[0-9a-f]{64};/)
      expect(queries.filter((sql) => /^update `Session`/i.test(sql))).toHaveLength(1)
    }
  })

  it('sets the row expiry and the cookie Expires from maxAge', async () => {
    setNow(START)
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { maxAge: 3600 } })
    const agent = request.agent(app)
    const header = setCookie(await signInWithPassword(agent), SESSION_COOKIE)
    const expires = new Date(START + HOUR)
    expect(cookieExpires(header)).toBe(expires.getTime())
    expect((await sessionRows(db))[0]!.expires).toEqual(expires)
    expect((await agent.get('/me')).body).toEqual(adaSession(expires))
  })
})

describe('sessions that are not (or no longer) valid', () => {
  it('gives null for an expired row, clears the cookie and deletes the row (auth() and GET /session)', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter })
    for (const path of ['/me', '/api/auth/session']) {
      const agent = request.agent(app)
      const token = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
      await db('Session').where({ sessionToken: token }).update({ expires: new Date(Date.now() - 1000) })
      const response = await agent.get(path).expect(200)
      expect(response.body).toBeNull()
      expect(isCleared(setCookie(response, SESSION_COOKIE))).toBe(true)
      expect(await db('Session').where({ sessionToken: token })).toEqual([])
    }
  })

  it('treats a row whose expiry is now as expired', async () => {
    setNow(START)
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { maxAge: 3600 } })
    const token = cookieValue(setCookie(await signInWithPassword(request.agent(app)), SESSION_COOKIE))!
    setNow(START + HOUR - 1000)
    await request(app).get('/api/auth/sessions/list').set('Cookie', `${SESSION_COOKIE}=${token}`).expect(200)
    expect((await request(app).get('/me').set('Cookie', `${SESSION_COOKIE}=${token}`)).body.user.id).toBe('user-1')
    setNow(START + HOUR)
    // The device list only peeks at the row (it does not delete it): to it as to auth(), no session.
    await request(app).get('/api/auth/sessions/list').set('Cookie', `${SESSION_COOKIE}=${token}`).expect(401)
    expect((await request(app).get('/me').set('Cookie', `${SESSION_COOKIE}=${token}`)).body).toBeNull()
    expect(await sessionRows(db)).toEqual([])
  })

  it('gives null for an unknown token and clears the cookie, with one query and no write', async () => {
    const { adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter })
    queries.length = 0
    const response = await request(app).get('/me').set('Cookie', `${SESSION_COOKIE}=${'ab'.repeat(32)}`).expect(200)
    expect(response.body).toBeNull()
    expect(isCleared(setCookie(response, SESSION_COOKIE))).toBe(true)
    expect(queries).toHaveLength(1)
  })

  it('does not look up a cookie longer than any token (junk, an old chunked JWT), and clears every chunk', async () => {
    const { adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter })
    const jwtLike = ['eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0', '', 'A'.repeat(22), 'B'.repeat(600), 'C'.repeat(43)].join('.')
    queries.length = 0
    const long = await request(app).get('/me').set('Cookie', `${SESSION_COOKIE}=${jwtLike}`).expect(200)
    expect(long.body).toBeNull()
    expect(isCleared(setCookie(long, SESSION_COOKIE))).toBe(true)

    const chunked = await request(app)
      .get('/api/auth/session')
      .set('Cookie', `${SESSION_COOKIE}.0=${jwtLike.slice(0, 400)}; ${SESSION_COOKIE}.1=${jwtLike.slice(400)}`)
      .expect(200)
    expect(chunked.body).toBeNull()
    const cleared = (chunked.headers['set-cookie'] as unknown as string[]).map((cookie) => cookie.split(';')[0]).sort()
    expect(cleared).toEqual([`${SESSION_COOKIE}.0=`, `${SESSION_COOKIE}.1=`])
    expect(queries).toEqual([])

    // Nor do the device list and sign-out, and a sign-in over it only writes its own row.
    const csrf = await request(app).get('/api/auth/csrf')
    const cookies = `${setCookie(csrf, 'authjs.csrf-token')!.split(';')[0]}; ${SESSION_COOKIE}=${jwtLike}`
    const { csrfToken } = csrf.body as { csrfToken: string }
    await request(app).get('/api/auth/sessions/list').set('Cookie', cookies).expect(401)
    const signOut = await request(app).post('/api/auth/signout').set('Cookie', cookies).type('form').send({ csrfToken }).expect(302)
    expect(signOut.headers.location).not.toMatch(/error=/)
    expect(queries).toEqual([])
    const signIn = await request(app).post('/api/auth/callback/credentials').set('Cookie', cookies).type('form').send({ csrfToken, username: 'ada', password: 'lovelace' }).expect(302)
    expect(setCookie(signIn, SESSION_COOKIE)).toMatch(/^authjs\.session-token=[0-9a-f]{64};/)
    // Only the user and the new row: the junk is not looked up to delete a previous row.
    expect(queries.filter((sql) => /from `Session`|^delete/.test(sql))).toEqual([])
  })

  it('gives null for the JWT cookie of a JWT-session app with the same secret, and clears it', async () => {
    const jwtApp = createTestApp().app
    const jwtCookie = setCookie(await signInWithPassword(request.agent(jwtApp)), SESSION_COOKIE)!.split(';')[0]!
    expect(jwtCookie).toMatch(/^authjs\.session-token=eyJ/)
    const { adapter } = await createDatabase()
    const { app } = createTestApp({ adapter })
    const response = await request(app).get('/me').set('Cookie', jwtCookie).expect(200)
    expect(response.body).toBeNull()
    expect(isCleared(setCookie(response, SESSION_COOKIE))).toBe(true)
  })
})

describe('callbacks and events', () => {
  it('passes { session, user } to the session callback, the user being the database row, and serves what it returns', async () => {
    const { adapter } = await createDatabase()
    const emailVerified = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))
    await adapter.updateUser({ id: 'user-1', emailVerified, image: 'https://example.com/ada.png' })
    const session = jest.fn(({ session, user }: SessionCallbackParams): Session => ({
      ...session,
      user: { ...session.user, role: 'admin' },
      verified: user.emailVerified?.toISOString() ?? null,
    }))
    const sessionEvent = jest.fn<NonNullable<EventsOptions['session']>>()
    const { app } = createTestApp({ adapter, callbacks: { session }, events: { session: sessionEvent } })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    expect(session).not.toHaveBeenCalled()

    const me = await agent.get('/me').expect(200)
    const expected = {
      user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', image: 'https://example.com/ada.png', role: 'admin' },
      expires: expect.any(String),
      verified: emailVerified.toISOString(),
    }
    expect(me.body).toEqual(expected)
    expect(session).toHaveBeenCalledTimes(1)
    const params = session.mock.calls[0]![0]
    expect(params.user).toEqual({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', emailVerified, image: 'https://example.com/ada.png' })
    expect(params.session).toEqual({ user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', image: 'https://example.com/ada.png' }, expires: me.body.expires })
    expect(params.token).toBeUndefined()
    expect(params.trigger).toBeUndefined()
    expect((await agent.get('/api/auth/session')).body).toEqual(expected)

    expect(sessionEvent).toHaveBeenCalledTimes(2)
    expect(sessionEvent).toHaveBeenLastCalledWith({ session: { ...expected, expires: me.body.expires } })
  })

  it('emits signIn with the database user and signOut with the deleted row', async () => {
    const { db, adapter } = await createDatabase()
    const signIn = jest.fn<NonNullable<EventsOptions['signIn']>>()
    const signOut = jest.fn<NonNullable<EventsOptions['signOut']>>()
    const { app } = createTestApp({ adapter, events: { signIn, signOut } })
    const agent = request.agent(app)
    const token = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    expect(signIn).toHaveBeenCalledWith({
      user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', emailVerified: null, image: null },
      account: { provider: 'credentials', type: 'credentials', providerAccountId: 'user-1' },
      isNewUser: false,
    })
    const [row] = await sessionRows(db)
    const { id } = (await db('Session').first('id')) as { id: string }

    // The token first (the sign-in rotated it): the agent attaches its cookies when a request is created.
    let csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/signout').type('form').send({ csrfToken }).expect(302)
    expect(signOut).toHaveBeenCalledTimes(1)
    expect(signOut).toHaveBeenCalledWith({ session: { id, sessionToken: token, userId: 'user-1', expires: row!.expires } })

    // Signing out without a session: nothing to delete.
    csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/signout').type('form').send({ csrfToken }).expect(302)
    expect(signOut).toHaveBeenLastCalledWith({ session: null })
  })
})

describe('POST /session', () => {
  it('extends the expiry at once and passes trigger "update" and newSession to the session callback', async () => {
    setNow(START)
    const { db, adapter } = await createDatabase()
    const session = jest.fn(({ session, trigger, newSession }: SessionCallbackParams): Session =>
      trigger === 'update' ? { ...session, user: { ...session.user, name: (newSession as { name: string }).name } } : session,
    )
    const { app } = createTestApp({ adapter, callbacks: { session } })
    const agent = request.agent(app)
    await signInWithPassword(agent)

    setNow(START + HOUR)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/session').send({ csrfToken, data: { name: 'Countess of Lovelace' } }).expect(200)
    const extended = new Date(START + HOUR + 30 * DAY)
    expect(response.body).toEqual({ ...adaSession(extended), user: { ...adaSession(extended).user, name: 'Countess of Lovelace' } })
    expect(session).toHaveBeenLastCalledWith(expect.objectContaining({ trigger: 'update', newSession: { name: 'Countess of Lovelace' } }))
    expect(cookieExpires(setCookie(response, SESSION_COOKIE))).toBe(extended.getTime())
    expect((await sessionRows(db))[0]!.expires).toEqual(extended)
  })

  it('refuses an update without the CSRF token, writing nothing', async () => {
    setNow(START)
    const { db, adapter, queries } = await createDatabase()
    const session = jest.fn(({ session }: SessionCallbackParams) => session)
    const { app } = createTestApp({ adapter, callbacks: { session } })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    setNow(START + HOUR)
    queries.length = 0
    const response = await agent.post('/api/auth/session').send({ data: { name: 'Mallory' } }).expect(403)
    expect(response.body).toMatchObject({ error: 'MissingCSRF' })
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(queries).toEqual([])
    expect(session).not.toHaveBeenCalled()
    expect((await sessionRows(db))[0]!.expires).toEqual(new Date(START + 30 * DAY))
  })
})

describe('generateSessionToken', () => {
  it('uses a custom generator for the token of the row and the cookie', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { generateSessionToken: () => randomUUID() } })
    const agent = request.agent(app)
    const token = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect((await sessionRows(db)).map((row) => row.sessionToken)).toEqual([token])
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('takes tokens of up to 255 characters through sign-in, reads, the device list, a new sign-in and sign-out', async () => {
    const { db, adapter } = await createDatabase()
    let issued = 0
    const { app } = createTestApp({ adapter, session: { generateSessionToken: () => `${'t'.repeat(250)}${String(++issued).padStart(5, '0')}` } })
    const agent = request.agent(app)
    const first = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    expect(first).toHaveLength(255)
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
    await agent.get('/api/auth/sessions/list').expect(200)
    const second = cookieValue(setCookie(await signInWithPassword(agent), SESSION_COOKIE))!
    expect((await sessionRows(db)).map((row) => row.sessionToken)).toEqual([second])
    const csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/signout').type('form').send({ csrfToken }).expect(302)
    expect(await sessionRows(db)).toEqual([])
  })

  it.each([
    ['over 255 characters', 't'.repeat(256)],
    ['a number', 42],
    ['nothing', undefined],
  ])('fails the sign-in with the Configuration error page and no row when it returns %s', async (_what, token) => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter, logger: recordingLogger(), session: { generateSessionToken: () => token as string } })
    const callback = await signInWithPassword(request.agent(app))
    expect(callback.headers.location).toMatch(/\/api\/auth\/error\?error=Configuration$/)
    expect(await sessionRows(db)).toEqual([])
  })

  it('fails the sign-in with the Configuration error page and no row when it returns an empty string', async () => {
    const { db, adapter } = await createDatabase()
    const logger = { ...recordingLogger(), error: jest.fn<LoggerInstance['error']>() }
    const signIn = jest.fn<NonNullable<EventsOptions['signIn']>>()
    const { app } = createTestApp({ adapter, logger, events: { signIn }, session: { generateSessionToken: () => '' } })
    const agent = request.agent(app)
    const callback = await signInWithPassword(agent)
    expect(callback.status).toBe(302)
    expect(callback.headers.location).toMatch(/\/api\/auth\/error\?error=Configuration$/)
    expect(setCookie(callback, SESSION_COOKIE)).toBeUndefined()
    expect(await sessionRows(db)).toEqual([])
    expect(signIn).not.toHaveBeenCalled()
    expect(logger.error).toHaveBeenCalledWith('InvalidConfiguration', expect.stringContaining('generateSessionToken'))
  })
})

describe('choosing the strategy', () => {
  it('defaults to database sessions with an adapter', async () => {
    const { db, adapter } = await createDatabase()
    const { app } = createTestApp({ adapter })
    expect(setCookie(await signInWithPassword(request.agent(app)), SESSION_COOKIE)).toMatch(/^authjs\.session-token=[0-9a-f]{64};/)
    expect(await sessionRows(db)).toHaveLength(1)
  })

  it('keeps JWT sessions with an explicit strategy "jwt" and an adapter: a JWE cookie, no session row', async () => {
    const { db, adapter, queries } = await createDatabase()
    const { app } = createTestApp({ adapter, session: { strategy: 'jwt' } })
    const agent = request.agent(app)
    expect(setCookie(await signInWithPassword(agent), SESSION_COOKIE)).toMatch(/^authjs\.session-token=eyJ[^;]+;/)
    queries.length = 0
    expect((await agent.get('/me')).body).toEqual({ user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' }, expires: expect.any(String) })
    expect(queries).toEqual([])
    expect(await sessionRows(db)).toEqual([])
  })

  it('throws at init for strategy "database" without an adapter, or with one that lacks the session methods (or getUser, with credentials)', async () => {
    expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], session: { strategy: 'database' } })).toThrow(/adapter/)
    const { adapter } = await createDatabase()
    const { getSessionAndUser: _g, deleteSession: _d, ...partial } = adapter
    expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], adapter: partial })).toThrow(/getSessionAndUser, deleteSession/)
    const { getUser: _u, ...withoutGetUser } = adapter
    expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], adapter: withoutGetUser })).toThrow(/Credentials sign-in with database sessions needs an adapter with getUser/)
    expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], adapter: withoutGetUser, session: { strategy: 'jwt' } })).not.toThrow()
  })
})

describe('credentials sign-in with database sessions', () => {
  it('sends an authorize that returns a user not in the database to the Configuration error page, with no row and no cookie', async () => {
    const { db, adapter } = await createDatabase()
    const logger = { ...recordingLogger(), error: jest.fn<LoggerInstance['error']>() }
    const ghost = Credentials({ authorize: async () => ({ id: 'user-404', name: 'Ghost', email: 'ghost@example.com' }) })
    const { app } = createTestApp({ adapter, logger, providers: [ghost] })
    const agent = request.agent(app)
    const callback = await signInWithPassword(agent)
    expect(callback.status).toBe(302)
    expect(callback.headers.location).toMatch(/\/api\/auth\/error\?error=Configuration$/)
    expect(setCookie(callback, SESSION_COOKIE)).toBeUndefined()
    expect(await sessionRows(db)).toEqual([])
    expect(logger.error).toHaveBeenCalledWith('CallbackRouteError', expect.stringMatching(/user-404.*not in the database/))
    expect((await agent.get('/api/auth/error?error=Configuration')).status).toBe(500)
  })

  function loginApp(adapter: KnexAdapterInstance, config: Partial<PortcullisConfig> = {}) {
    const { handlers, auth, signIn, signOut } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], adapter, ...config })
    const app = express()
    app.use('/api/auth', handlers)
    app.use(express.urlencoded({ extended: false }))
    app.use(auth)
    app.post('/login', async (req, res, next) => {
      try {
        res.json({ url: await signIn('credentials', { ...req.body, redirectTo: '/welcome', redirect: false }) })
      } catch (error) {
        if (error instanceof CredentialsSignin) return void res.status(401).json({ error: error.type })
        next(error)
      }
    })
    app.post('/logout', async (_req, res) => void res.json({ url: await signOut({ redirect: false, redirectTo: '/goodbye' }) }))
    // The session as the request's handler sees it before and after signing out in the same request.
    app.post('/logout-and-read', async (req, res) => {
      const before = await auth(req, res)
      await signOut({ redirect: false })
      res.json({ before: before?.user.id ?? null, after: await auth(req, res), reqAuth: req.auth === undefined ? 'unset' : req.auth })
    })
    app.get('/me', async (req, res) => void res.json(await auth(req, res)))
    return app
  }

  it('a handler that signs out reads no session after it in the same request', async () => {
    const { adapter } = await createDatabase()
    const agent = request.agent(loginApp(adapter))
    const loginToken = await fetchCsrfToken(agent)
    await agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace', csrfToken: loginToken }).expect(200)
    const csrfToken = await fetchCsrfToken(agent)
    const answer = await agent.post('/logout-and-read').type('form').send({ csrfToken }).expect(200)
    expect(answer.body).toEqual({ before: 'user-1', after: null, reqAuth: null })
  })

  it('signs in and out with the server-side signIn and signOut', async () => {
    const { db, adapter } = await createDatabase()
    const signOutEvent = jest.fn<NonNullable<EventsOptions['signOut']>>()
    const agent = request.agent(loginApp(adapter, { events: { signOut: signOutEvent } }))

    const loginToken = await fetchCsrfToken(agent)
    const login = await agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace', csrfToken: loginToken }).expect(200)
    expect(new URL(login.body.url).pathname).toBe('/welcome')
    const token = cookieValue(setCookie(login, SESSION_COOKIE))!
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    expect((await sessionRows(db)).map((row) => row.sessionToken)).toEqual([token])
    expect((await agent.get('/me')).body).toEqual(adaSession((await sessionRows(db))[0]!.expires))

    const csrfToken = await fetchCsrfToken(agent)
    const logout = await agent.post('/logout').type('form').send({ csrfToken }).expect(200)
    expect(new URL(logout.body.url).pathname).toBe('/goodbye')
    expect(isCleared(setCookie(logout, SESSION_COOKIE))).toBe(true)
    expect(await sessionRows(db)).toEqual([])
    expect(signOutEvent).toHaveBeenCalledWith({ session: expect.objectContaining({ sessionToken: token, userId: 'user-1' }) })
    expect((await agent.get('/me')).body).toBeNull()

    const retryToken = await fetchCsrfToken(agent)
    expect((await agent.post('/login').type('form').send({ username: 'ada', password: 'wrong', csrfToken: retryToken }).expect(401)).body).toEqual({ error: 'CredentialsSignin' })
    expect(await sessionRows(db)).toEqual([])
  })
})

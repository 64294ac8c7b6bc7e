/**
 * JWT revocation across instances and through outages: an ended session is refused by every
 * instance sharing the store within `revocationCacheSeconds`; while the store is down a session
 * confirmed within `storeOutageSeconds` stays in and any other read fails without signing anyone
 * out; tokens from before the store get a session id; the server-side functions.
 * (Two Portcullis instances in one process keep separate caches, as two processes do.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import express from 'express'
import knex from 'knex'
import request from 'supertest'
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { InvalidConfigurationError, type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { encode } from 'portcullis/jwt'
import Password, { scryptHasher } from 'portcullis/providers/password'
import { authApp } from '../support/app-rig.js'
import { fetchCsrfToken, SECRET, setCookie } from '../support/flow.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { describeWithRedis } from '../support/redis.js'
import { recordingLogger } from '../support/logger.js'
import { signIn } from './contract.js'

const anyone = Credentials({ authorize: async ({ username }) => ({ id: `user-${String(username)}`, name: String(username) }) })
const COOKIE = 'authjs.session-token'
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function app(session: PortcullisConfig['session'], jwt?: PortcullisConfig['jwt']) {
  const logger = recordingLogger()
  return { logger, ...authApp({ secret: SECRET, trustHost: true, providers: [anyone], logger, session: { strategy: 'jwt', ...session }, ...(jwt ? { jwt } : {}) }) }
}

/** POST /signout as the browser holding `cookie` would send it (with its CSRF cookie and token). */
async function signOutWith(instance: express.Express, cookie: string, path = '/api/auth/signout'): Promise<void> {
  const csrf = await request(instance).get('/api/auth/csrf').set('Cookie', cookie)
  const csrfCookie = setCookie(csrf, 'authjs.csrf-token')!.split(';')[0]!
  await request(instance).post(path).set('Cookie', `${cookie}; ${csrfCookie}`).type('form').send({ csrfToken: csrf.body.csrfToken }).expect(302)
}

/** Signs in on `instance` and returns the session cookie as a Cookie header. */
async function sessionCookie(instance: express.Express, username = 'ada'): Promise<string> {
  const agent = request.agent(instance)
  const csrfToken = await fetchCsrfToken(agent)
  const response = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username, password: 'x' })
  return setCookie(response, COOKIE)!.split(';')[0]!
}

async function whoIs(instance: express.Express, cookie: string) {
  const response = await request(instance).get('/me').set('Cookie', cookie)
  return { status: response.status, name: (response.body as { user?: { name?: string } } | null)?.user?.name ?? null, setCookie: setCookie(response, COOKIE) }
}

await describeWithRedis('JWT revocation on a shared Redis store', (server) => {
  afterAll(() => server.cleanUp())

  it('a session signed out on one instance is refused by another within revocationCacheSeconds', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const one = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 1 })
    const two = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 1 })
    const cookie = await sessionCookie(one.app, 'ada')
    expect((await whoIs(two.app, cookie)).name).toBe('ada')
    await signOutWith(one.app, cookie)
    // The instance that ended it refuses at once.
    expect((await whoIs(one.app, cookie)).name).toBeNull()
    // The other trusts its last check for at most a second, then asks the store: its session list
    // (the first read there since) refuses the ended session too, and so does auth().
    await pause(1100)
    await request(two.app).get('/api/auth/sessions/list').set('Cookie', cookie).expect(401)
    const after = await whoIs(two.app, cookie)
    expect(after.name).toBeNull()
    expect(after.setCookie).toMatch(/^authjs\.session-token=;/)
  })

  it('while the store is down, a recently confirmed session stays in, any other read fails, and nobody is signed out', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const client = server.connect()
    const healthy = app({ store: { redis: server.connect(), keyPrefix } })
    // A 3 s outage window: the confirmation and the reads during the outage are milliseconds apart, but a
    // loaded CI machine once took over a second between them (Node 22) with a 1 s window.
    const failing = app({ store: { redis: client, keyPrefix }, revocationCacheSeconds: 0, storeOutageSeconds: 3 })
    const confirmed = await sessionCookie(healthy.app, 'ada')
    const unconfirmed = await sessionCookie(healthy.app, 'grace')
    expect((await whoIs(failing.app, confirmed)).name).toBe('ada')
    client.disconnect()

    expect((await whoIs(failing.app, confirmed)).name).toBe('ada')
    // AdapterError carries 503: Express's default handler answers it so (it answered 500 before issue 69).
    const refused = await whoIs(failing.app, unconfirmed)
    expect(refused.status).toBe(503)
    expect(refused.setCookie).toBeUndefined()
    expect(failing.logger.lines.some((line) => line.code === 'AdapterError')).toBe(true)

    // Past storeOutageSeconds the confirmation no longer covers it: an error, the cookie kept.
    await pause(3100)
    const later = await whoIs(failing.app, confirmed)
    expect(later.status).toBe(503)
    expect(later.setCookie).toBeUndefined()
    // The store is fine for everyone else: both sessions stand.
    expect((await whoIs(healthy.app, confirmed)).name).toBe('ada')
    expect((await whoIs(healthy.app, unconfirmed)).name).toBe('grace')
  })

  it('answers each of many sessions checked at once (one script run)', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const one = app({ store: { redis: server.connect(), keyPrefix } })
    const two = app({ store: { redis: server.connect(), keyPrefix } })
    const answers = await burstOfChecks(one.app, two.app)
    expect(answers.map((answer) => answer.name)).toEqual(Array.from({ length: 20 }, (_, i) => (i === 4 ? null : `user${i}`)))
  })

  it('gives a token from before the store a session id, and signing out everywhere ends the old copy too', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const before = app({})
    const withStore = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 0 })
    const legacy = await sessionCookie(before.app, 'ada')
    const upgraded = await whoIs(withStore.app, legacy)
    expect(upgraded.name).toBe('ada')
    expect(upgraded.setCookie).toMatch(/^authjs\.session-token=[^;]+/)
    const current = upgraded.setCookie!.split(';')[0]!
    const listed = await request(withStore.app).get('/api/auth/sessions/list').set('Cookie', current).expect(200)
    expect(listed.body.sessions).toEqual([expect.objectContaining({ current: true })])

    await signOutWith(withStore.app, current, '/api/auth/sessions/signout-everywhere')
    expect((await whoIs(withStore.app, current)).name).toBeNull()
    expect((await whoIs(withStore.app, legacy)).name).toBeNull()
  })

  it('a user signed out everywhere on one instance: another that vouched for an old token without session id refuses it within revocationCacheSeconds', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const before = app({})
    const one = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 1 })
    const two = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 1 })
    const legacy = await sessionCookie(before.app, 'ada')
    // Two reads on the second instance: the first gives the token a session id (a new cookie, not kept
    // here), the second is answered from what the instance knows.
    expect((await whoIs(two.app, legacy)).name).toBe('ada')
    expect((await whoIs(two.app, legacy)).name).toBe('ada')
    const current = (await whoIs(one.app, legacy)).setCookie!.split(';')[0]!
    await signOutWith(one.app, current, '/api/auth/sessions/signout-everywhere')
    await pause(1100)
    expect((await whoIs(two.app, legacy)).name).toBeNull()
  })

  it('an old token without session id read on another instance just after signing out everywhere is not given a new session', async () => {
    const keyPrefix = server.uniqueKeyPrefix()
    const one = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 600 })
    const two = app({ store: { redis: server.connect(), keyPrefix }, revocationCacheSeconds: 600 })
    const { read, records } = await legacyReadAfterSignOutEverywhere(one.app, two.app)
    expect(read.name).toBeNull()
    expect(read.setCookie).toMatch(/^authjs\.session-token=;/)
    expect(records).toEqual([])
  })
})

/** 20 sessions signed in on `one`, the fifth signed out; `two` (which never saw them) reads all 20 at once. */
async function burstOfChecks(one: express.Express, two: express.Express) {
  const cookies = await Promise.all(Array.from({ length: 20 }, (_, i) => sessionCookie(one, `user${i}`)))
  await signOutWith(one, cookies[4]!)
  return Promise.all(cookies.map((cookie) => whoIs(two, cookie)))
}

/**
 * Signing out everywhere against an old token without session id read on another instance: `two`
 * has vouched for the token (an answer it keeps for revocationCacheSeconds, long enough here), the
 * user signs out everywhere on `one`, then the token is read on `two` again, within that time. That
 * read may not give it a session id (a new cookie and record that the sign-out never refuses).
 */
async function legacyReadAfterSignOutEverywhere(one: express.Express, two: express.Express) {
  const legacy = await sessionCookie(app({}).app, 'ada')
  expect((await whoIs(two, legacy)).name).toBe('ada')
  const current = (await whoIs(one, legacy)).setCookie!.split(';')[0]!
  await revokeEverywhere(one, current)
  const read = await whoIs(two, legacy)
  // The store's records of the user, listed for a new sign-in (listing reads the store, no cache).
  const fresh = await sessionCookie(one, 'ada')
  const listed = await request(one).get('/api/auth/sessions/list').set('Cookie', fresh).expect(200)
  return { read, records: (listed.body.sessions as Array<{ current: boolean }>).filter((session) => !session.current) }
}

describe('checks of many sessions at once', () => {
  it('are answered per session from one store query (Knex on SQLite)', async () => {
    const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      const one = app({ store: { knex: db } })
      const two = app({ store: { knex: db } })
      const queries: string[] = []
      const count = (query: { sql: string }) => void queries.push(query.sql)
      const answers = await burstOfChecks(one.app, two.app)
      expect(answers.map((answer) => answer.name)).toEqual(Array.from({ length: 20 }, (_, i) => (i === 4 ? null : `user${i}`)))
      // Read again on a third instance, counting: 19 live sessions, one query.
      const three = app({ store: { knex: db } })
      const cookies = await Promise.all(Array.from({ length: 19 }, (_, i) => sessionCookie(one.app, `again${i}`)))
      db.on('query', count)
      const again = await Promise.all(cookies.map((cookie) => whoIs(three.app, cookie)))
      db.off('query', count)
      expect(again.every((answer) => answer.name?.startsWith('again'))).toBe(true)
      expect(queries.filter((sql) => /^select .* from `portcullis_session_store`/.test(sql))).toHaveLength(1)
    } finally {
      await db.destroy()
    }
  })
})

describe('the server-side functions', () => {
  const instance = app({ store: 'memory' })
  const { listSessions, revokeSession, revokeOtherSessions, signOutEverywhere } = instance
  const server = express()
  server.use(express.urlencoded({ extended: false }))
  server.use('/api/auth', instance.handlers)
  server.get('/me', async (req, res) => res.json(await instance.auth(req, res)))
  server.get('/devices', async (req, res) => res.json(await listSessions(req)))
  server.post('/devices/:id/end', async (req, res, next) => {
    try {
      res.json({ ended: await revokeSession(req, req.params.id) })
    } catch (error) {
      next(error)
    }
  })
  server.post('/devices/end-others', async (req, res) => res.json({ ended: await revokeOtherSessions({ req, res }, { skipCsrfCheck: true }) }))
  server.post('/everywhere', async (req, res) => res.json({ ended: await signOutEverywhere(req) }))
  server.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(403).json({ error: error.name }))

  it('list and end sessions of the request’s own user, CSRF-checked, the request’s cookie cleared when its own session ends', async () => {
    const laptop = await signIn(server, 'ada')
    const phone = await signIn(server, 'ada')
    const tablet = await signIn(server, 'ada')
    const devices = (await laptop.get('/devices').expect(200)).body as Array<{ id: string; current: boolean }>
    expect(devices).toHaveLength(3)
    const phoneId = ((await phone.get('/devices')).body as Array<{ id: string; current: boolean }>).find((device) => device.current)!.id

    // Without the form's CSRF token the call is refused.
    expect((await laptop.post(`/devices/${phoneId}/end`).type('form').send({})).body).toEqual({ error: 'MissingCSRFError' })
    const csrfToken = await fetchCsrfToken(laptop)
    expect((await laptop.post(`/devices/${phoneId}/end`).type('form').send({ csrfToken })).body).toEqual({ ended: true })
    expect((await phone.get('/me')).body).toBeNull()
    expect((await laptop.post('/devices/end-others')).body).toEqual({ ended: 1 })
    expect((await tablet.get('/me')).body).toBeNull()

    const everywhere = await laptop.post('/everywhere').type('form').send({ csrfToken: await fetchCsrfToken(laptop) })
    expect(everywhere.body).toEqual({ ended: 1 })
    expect(setCookie(everywhere, COOKIE)).toMatch(/^authjs\.session-token=;/)
    expect((await laptop.get('/devices')).body).toEqual([])
  })

  it('without a store, JWT sessions cannot be listed and the error says what to configure', async () => {
    const plain = app({})
    const cookie = await sessionCookie(plain.app, 'ada')
    expect((await whoIs(plain.app, cookie)).name).toBe('ada')
    const req = Object.assign(new IncomingMessage(new Socket()), { method: 'GET', headers: { cookie, host: 'localhost' } })
    await expect(plain.listSessions(req)).rejects.toThrow(InvalidConfigurationError)
    await expect(plain.signOutEverywhere(req, { skipCsrfCheck: true })).rejects.toThrow(/session\.store/)
  })
})

describe('signing out with a token from before the store', () => {
  it('refuses every copy of it afterwards: with no record to delete, the user’s tokens issued until then are refused', async () => {
    const before = app({})
    const withStore = app({ store: 'memory' })
    const legacy = await sessionCookie(before.app, 'ada')
    await signOutWith(withStore.app, legacy)
    expect((await whoIs(withStore.app, legacy)).name).toBeNull()
    // Only the user's: another user's old token still stands.
    expect((await whoIs(withStore.app, await sessionCookie(before.app, 'grace'))).name).toBe('grace')
  })

  it('a read of an old token under way while the user signs out everywhere does not give it a new session (one instance, memory store)', async () => {
    // The read is held in the jwt callback, after the token was found to stand and before it is recorded.
    let entered!: () => void
    const reading = new Promise<void>((resolve) => (entered = resolve))
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const withStore = authApp({
      secret: SECRET,
      trustHost: true,
      providers: [anyone],
      session: { strategy: 'jwt', store: 'memory' },
      callbacks: {
        jwt: async ({ token }) => {
          if (token.sid === undefined) {
            entered()
            await held
          }
          return token
        },
      },
    })
    const legacy = await sessionCookie(app({}).app, 'ada')
    const current = await sessionCookie(withStore.app, 'ada')
    const read = whoIs(withStore.app, legacy)
    await reading
    await revokeEverywhere(withStore.app, current)
    release()
    const answer = await read
    expect(answer.name).toBeNull()
    expect(answer.setCookie).toMatch(/^authjs\.session-token=;/)
    const fresh = await sessionCookie(withStore.app, 'ada')
    const listed = await request(withStore.app).get('/api/auth/sessions/list').set('Cookie', fresh).expect(200)
    expect(listed.body.sessions).toEqual([expect.objectContaining({ current: true })])
  })

  it('the refusal is kept for jwt.maxAge: an instance that reads the store later refuses the token too', async () => {
    const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      // jwt.maxAge of 2 s: the refusal outlives the pause below, a refusal kept for 2 ms would not.
      const one = app({ store: { knex: db } }, { maxAge: 2 })
      const two = app({ store: { knex: db } }, { maxAge: 2 })
      const before = app({}).app
      const legacy = await sessionCookie(before, 'ada')
      await signOutWith(one.app, legacy)
      await pause(100)
      expect((await whoIs(two.app, legacy)).name).toBeNull()
      // What it would have answered: another user's token of the same age stands there.
      expect((await whoIs(two.app, await sessionCookie(before, 'grace'))).name).toBe('grace')
    } finally {
      await db.destroy()
    }
  })
})

describe('changePassword() and tokens from before the store', () => {
  const PASSWORD = 'correct horse battery staple'
  const hashing = scryptHasher({ N: 2 ** 14 })
  let db: ReturnType<typeof knex>

  beforeAll(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const adapter = KnexAdapter(db)
    await adapter.createUser({ id: 'user-ines', email: 'ines@example.com', emailVerified: new Date(), name: 'ines' })
    await adapter.setUserPassword!('user-ines', await hashing.hash(PASSWORD))
  })
  afterAll(() => db?.destroy())

  /** Ines's app, and a route that changes her password. */
  function passwordApp() {
    const instance = authApp({
      secret: SECRET,
      trustHost: true,
      adapter: KnexAdapter(db),
      providers: [Password({ hashing, sendMail: async () => {} })],
      session: { strategy: 'jwt', store: 'memory' },
    })
    instance.app.post('/account/password', async (req, res) => {
      await instance.changePassword(req, { currentPassword: PASSWORD, newPassword: PASSWORD, skipCsrfCheck: true })
      res.send('changed')
    })
    return instance
  }

  /** A session cookie of Ines's from before the store (or an Auth.js app sharing the secret): no session id. */
  async function legacyCookie(): Promise<string> {
    return `${COOKIE}=${await encode({ token: { sub: 'user-ines', name: 'ines', email: 'ines@example.com' }, secret: SECRET, salt: COOKIE })}`
  }

  async function passwordCookie(instance: express.Express): Promise<string> {
    const agent = request.agent(instance)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/callback/password').type('form').send({ csrfToken, email: 'ines@example.com', password: PASSWORD })
    return setCookie(response, COOKIE)!.split(';')[0]!
  }

  it('a change refuses every older token without session id; the current session, with one, stays', async () => {
    const withStore = passwordApp()
    const legacy = await legacyCookie()
    const current = await passwordCookie(withStore.app)
    expect((await whoIs(withStore.app, legacy)).name).toBe('ines')
    await request(withStore.app).post('/account/password').set('Cookie', current).expect(200, 'changed')
    expect((await whoIs(withStore.app, legacy)).name).toBeNull()
    expect((await whoIs(withStore.app, current)).name).toBe('ines')
  })

  it('a change made with a token without session id gives it one (a new cookie), so it stays while the older ones are refused', async () => {
    const withStore = passwordApp()
    const older = await legacyCookie()
    const current = await legacyCookie()
    const changed = await request(withStore.app).post('/account/password').set('Cookie', current).expect(200, 'changed')
    const renewed = setCookie(changed, COOKIE)!.split(';')[0]!
    expect(renewed).toMatch(/^authjs\.session-token=[^;]+/)
    expect((await whoIs(withStore.app, renewed)).name).toBe('ines')
    expect((await whoIs(withStore.app, older)).name).toBeNull()
    // The token the change was made with is older than the change too: only its renewed copy stands.
    expect((await whoIs(withStore.app, current)).name).toBeNull()
    const listed = await request(withStore.app).get('/api/auth/sessions/list').set('Cookie', renewed).expect(200)
    expect(listed.body.sessions).toEqual([expect.objectContaining({ current: true })])
  })

  it('auth() after a change in the same request reads the renewed session, and does not clear the cookie the change set', async () => {
    const withStore = passwordApp()
    withStore.app.post('/account/password-then-me', async (req, res) => {
      await withStore.changePassword(req, { currentPassword: PASSWORD, newPassword: PASSWORD, skipCsrfCheck: true })
      res.json(await withStore.auth(req, res))
    })
    const changed = await request(withStore.app).post('/account/password-then-me').set('Cookie', await legacyCookie()).expect(200)
    expect((changed.body as { user?: { name?: string } } | null)?.user?.name).toBe('ines')
    const cookies = ((changed.headers['set-cookie'] as unknown as string[] | undefined) ?? []).filter((cookie) => cookie.startsWith(`${COOKIE}=`))
    // The browser keeps the last Set-Cookie of a name: it must be the renewed session, not a clearing one.
    const kept = cookies.at(-1)!.split(';')[0]!
    expect(kept).toMatch(/^authjs\.session-token=[^;]+/)
    expect((await whoIs(withStore.app, kept)).name).toBe('ines')
  })
})

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `JWT revocation on a shared Knex store (${kind})`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
    })
    afterAll(() => db?.destroy())

    it('a session ended on one instance is refused by another within revocationCacheSeconds, and warm sessions cost one store query per poll', async () => {
      // Two pools on one database, as two app servers have.
      const other = knex(db.config)
      try {
        // Reads are timed in whole seconds: 4 leaves at least three for the reads meant to fall within it
        // (with 2, one second was too little on a loaded machine: CI saw the second batch poll).
        const one = app({ store: { knex: db.knex }, revocationCacheSeconds: 4 })
        const two = app({ store: { knex: other }, revocationCacheSeconds: 4 })
        const cookies = await Promise.all(Array.from({ length: 10 }, (_, i) => sessionCookie(one.app, `user${i}`)))
        expect((await Promise.all(cookies.map((cookie) => whoIs(two.app, cookie)))).map((answer) => answer.name)).toEqual(cookies.map((_, i) => `user${i}`))

        const queries: string[] = []
        const count = (query: { sql: string }) => void queries.push(query.sql)
        other.on('query', count)
        // Within revocationCacheSeconds: answered from memory, no query at all.
        await Promise.all(cookies.map((cookie) => whoIs(two.app, cookie)))
        expect(queries).toEqual([])
        // Past it: one poll of the changes for all ten sessions, none of them asked again.
        await pause(4100)
        await Promise.all(cookies.map((cookie) => whoIs(two.app, cookie)))
        expect(queries).toHaveLength(1)

        await signOutWith(one.app, cookies[3]!)
        await revokeEverywhere(one.app, cookies[7]!)
        queries.length = 0
        await pause(4100)
        const after = await Promise.all(cookies.map((cookie) => whoIs(two.app, cookie)))
        other.off('query', count)
        expect(after.map((answer) => answer.name)).toEqual(cookies.map((_, i) => (i === 3 || i === 7 ? null : `user${i}`)))
        expect(after[3]!.setCookie).toMatch(/^authjs\.session-token=;/)
        // The poll, and one question for the two sessions it named.
        expect(queries).toHaveLength(2)
      } finally {
        await other.destroy()
      }
    })

    it('an old token without session id read on another instance just after signing out everywhere is not given a new session', async () => {
      const other = knex(db.config)
      try {
        const one = app({ store: { knex: db.knex }, revocationCacheSeconds: 600 })
        const two = app({ store: { knex: other }, revocationCacheSeconds: 600 })
        const { read, records } = await legacyReadAfterSignOutEverywhere(one.app, two.app)
        expect(read.name).toBeNull()
        expect(read.setCookie).toMatch(/^authjs\.session-token=;/)
        expect(records).toEqual([])
      } finally {
        await other.destroy()
      }
    })
  })
}

/** Signs the user of `cookie` out everywhere through the route, as that browser would. */
async function revokeEverywhere(instance: express.Express, cookie: string): Promise<void> {
  await signOutWith(instance, cookie, '/api/auth/sessions/signout-everywhere')
}

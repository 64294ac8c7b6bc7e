/**
 * Sign-out while the database is down. Clearing the cookie anyway would leave the session row
 * alive, and a copy of the token (another tab, a stolen cookie) would work again once the database
 * is back. So the sign-out fails with AdapterError (the error page, 503), the cookie is kept and the
 * `signOut` event does not fire; the user signs out again once the database is back, and then the
 * copied token is dead. On SQLite, PostgreSQL and MariaDB, with the database stopped in the middle
 * of the sign-out (the Knex pool destroyed inside `deleteSession`).
 */
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals'
import request from 'supertest'
import type { EventsOptions, LoggerInstance } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import { describeWithDatabase, type DatabaseKind, type TestDatabase } from '../support/databases.js'
import { createTestApp, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

const SESSION_COOKIE = 'authjs.session-token'

const sessionSetCookies = (res: { headers: Record<string, unknown> }): string[] =>
  ((res.headers['set-cookie'] as string[] | undefined) ?? []).filter((cookie) => cookie.startsWith(SESSION_COOKIE))

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `sign-out while the database is down (${kind})`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
      await db.knex.migrate.latest({ migrationSource: migrationSource() })
      await KnexAdapter(db.knex).createUser({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', emailVerified: null })
    })
    afterAll(() => db?.destroy())

    /** The Knex adapter, whose `deleteSession` stops the database (destroys the pool) first while `stop.next` is set. */
    function stoppingAdapter() {
      const stop = { next: false }
      const adapter = KnexAdapter(db.knex)
      return {
        stop,
        adapter: {
          ...adapter,
          async deleteSession(sessionToken: string) {
            if (stop.next) {
              stop.next = false
              await db.knex.destroy()
            }
            return adapter.deleteSession(sessionToken)
          },
        },
      }
    }

    it('answers AdapterError and keeps the cookie; once the database is back, sign-out deletes the row and a copy of the token no longer signs in', async () => {
      const { adapter, stop } = stoppingAdapter()
      const logger = { ...recordingLogger(), error: jest.fn<LoggerInstance['error']>() }
      const signOut = jest.fn<NonNullable<EventsOptions['signOut']>>()
      const { app } = createTestApp({ adapter, logger, events: { signOut } })
      const agent = request.agent(app)
      const copied = setCookie(await signInWithPassword(agent), SESSION_COOKIE)!.split(';')[0]!
      expect(copied).toMatch(/^authjs\.session-token=[0-9a-f]{64}$/)
      const sessionToken = copied.split('=')[1]!

      // Fetched before the POST is built: the agent attaches its cookies when it builds a request.
      let csrfToken = await fetchCsrfToken(agent)
      stop.next = true
      const down = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/bye' })
      expect(down.status).toBe(302)
      expect(down.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/auth\/error\?error=AdapterError$/)
      expect(sessionSetCookies(down)).toEqual([])
      expect(signOut).not.toHaveBeenCalled()
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining('deleteSession()'), expect.stringContaining('Unable to acquire a connection'))
      expect((await agent.get('/api/auth/error?error=AdapterError')).status).toBe(503)

      db.knex.initialize()
      // Still signed in: the row and the cookie both survived, so the user can simply try again.
      expect(await db.knex('Session').where({ sessionToken }).first()).toBeDefined()
      expect((await agent.get('/api/auth/session').expect(200)).body.user).toMatchObject({ id: 'user-1' })

      csrfToken = await fetchCsrfToken(agent)
      const up = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/bye' })
      expect(new URL(up.headers.location!).pathname).toBe('/bye')
      expect(sessionSetCookies(up)).toEqual([expect.stringMatching(/^authjs\.session-token=; Max-Age=0;/)])
      expect(signOut).toHaveBeenCalledTimes(1)
      expect(signOut).toHaveBeenCalledWith({ session: expect.objectContaining({ sessionToken, userId: 'user-1' }) })
      expect(await db.knex('Session').where({ sessionToken }).first()).toBeUndefined()

      // The copied cookie is dead: no session, and the cookie is cleared.
      const replay = await request(app).get('/api/auth/session').set('Cookie', copied).expect(200)
      expect(replay.body).toBeNull()
      expect(sessionSetCookies(replay)).toEqual([expect.stringMatching(/^authjs\.session-token=; Max-Age=0;/)])
    })

    it('gives a JSON client (X-Auth-Return-Redirect) the error page URL, and no cleared cookie', async () => {
      const { adapter, stop } = stoppingAdapter()
      const { app } = createTestApp({ adapter, logger: { ...recordingLogger(), error: () => {} } })
      const agent = request.agent(app)
      await signInWithPassword(agent)
      const csrfToken = await fetchCsrfToken(agent)
      stop.next = true
      const down = await agent.post('/api/auth/signout').set('X-Auth-Return-Redirect', '1').send({ csrfToken })
      db.knex.initialize()
      expect(down.status).toBe(200)
      expect(down.body).toEqual({ url: expect.stringMatching(/\/api\/auth\/error\?error=AdapterError$/), error: 'AdapterError', message: 'The database could not be reached: try again in a moment.' })
      expect(sessionSetCookies(down)).toEqual([])
      expect((await agent.get('/api/auth/session').expect(200)).body.user).toMatchObject({ id: 'user-1' })
    })
  })
}

/**
 * Database sessions: the session list's contract (contract.ts) on SQLite, PostgreSQL and MariaDB,
 * and what the fifth migration's columns hold.
 */
import { expect, it } from '@jest/globals'
import request from 'supertest'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { list, sessionListContract, signIn, type SessionsApp } from './contract.js'

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `database sessions on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    async function databaseApp(updateAge?: number): Promise<SessionsApp> {
      const adapter = KnexAdapter(db.knex)
      for (const name of ['ada', 'grace']) if (!(await adapter.getUser(`user-${name}`))) await adapter.createUser({ id: `user-${name}`, name, email: `${name}@example.com`, emailVerified: null })
      const revoked: SessionsApp['revoked'] = []
      const { app } = authApp({
        secret: SECRET,
        trustHost: true,
        adapter,
        providers: [Credentials({ authorize: async ({ username }) => ({ id: `user-${String(username)}`, name: String(username) }) })],
        session: { strategy: 'database', ...(updateAge === undefined ? {} : { updateAge }) },
        events: { sessionRevoked: (message) => void revoked.push(message) },
      })
      return { app, revoked, cookieName: 'authjs.session-token' }
    }

    sessionListContract(() => databaseApp())

    it('stores when and where each session started, and moves "last seen" only with the expiry', async () => {
      const { app } = await databaseApp(3600)
      const browser = await signIn(app, 'ada', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) Safari/605.1.15')
      const rows = await db.knex('Session').select()
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ ipAddress: '127.0.0.1', userAgent: expect.stringContaining('Macintosh') })
      const [before] = await list(browser)
      await new Promise((resolve) => setTimeout(resolve, 1100))
      await browser.get('/me').expect(200)
      // Within updateAge a read writes nothing: "last seen" stays where the expiry was last moved.
      expect((await list(browser))[0]!.lastSeenAt).toBe(before!.lastSeenAt)

      const eager = await databaseApp(0)
      const again = await signIn(eager.app, 'grace')
      const [first] = await list(again)
      await new Promise((resolve) => setTimeout(resolve, 1100))
      await again.get('/me').expect(200)
      const [second] = await list(again)
      expect(Date.parse(second!.lastSeenAt!)).toBeGreaterThan(Date.parse(first!.lastSeenAt!))
      expect(second!.createdAt).toBe(first!.createdAt)
    })

    it('lists 50 sessions with one query besides the session read', async () => {
      const adapter = KnexAdapter(db.knex)
      await adapter.createUser({ id: 'user-many', name: 'many', email: 'many@example.com', emailVerified: null })
      const expires = new Date(Date.now() + 3600_000)
      for (let i = 0; i < 50; i++) await adapter.createSession({ sessionToken: `token-${i}`, userId: 'user-many', expires, createdAt: new Date(), ipAddress: '192.0.2.1', userAgent: 'test' })
      const queries: string[] = []
      const count = (query: { sql: string }) => void queries.push(query.sql)
      db.knex.on('query', count)
      try {
        const { app } = await databaseApp()
        const listed = await request(app).get('/api/auth/sessions/list').set('Cookie', 'authjs.session-token=token-7').expect(200)
        expect(listed.body.sessions).toHaveLength(50)
        expect(listed.body.sessions[0]).toMatchObject({ current: true, ipAddress: '192.0.2.1' })
      } finally {
        db.knex.off('query', count)
      }
      // The session's own row (the read every request makes), then the list. (The adapter's one-time
      // look for the fifth migration's columns is not a read of the table.)
      const reads = queries.filter((sql) => /^select .* from [`"]Session[`"]/i.test(sql))
      expect(reads).toHaveLength(2)
    })

    it('keeps working for rows from before the fifth migration (null details)', async () => {
      const { app } = await databaseApp()
      const browser = await signIn(app, 'ada')
      await db.knex('Session').update({ createdAt: null, lastSeenAt: null, ipAddress: null, userAgent: null })
      const [session] = await list(browser)
      expect(session).toMatchObject({ current: true, createdAt: null, lastSeenAt: null, ipAddress: null, userAgent: null })
      const page = await browser.get('/api/auth/sessions').expect(200)
      expect(page.text).toContain('Unknown browser')
      expect((await request(app).get('/api/auth/sessions/list')).status).toBe(401)
    })
  })
}

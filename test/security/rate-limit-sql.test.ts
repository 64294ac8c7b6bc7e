/**
 * The sign-in limits counted in the app's database through Knex, on real SQLite, PostgreSQL and
 * MariaDB (each suite in a fresh database, test/support/databases.ts): two app instances with
 * pools of their own share one count, the table is created on first use, a success clears the
 * identifier's count, and a missing table is an outage (counted in memory, logged), not a lockout.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import type { RateLimitOptions } from 'portcullis'
import { describeWithDatabase, type DatabaseKind, type TestDatabase } from '../support/databases.js'
import { browser, browserAt, outcome, rateLimitedApp, right, wrong } from './rate-limit-app.js'

const KINDS: DatabaseKind[] = ['sqlite', 'postgres', 'mariadb']

for (const kind of KINDS) {
  await describeWithDatabase(kind, `rate limits in ${kind} through Knex`, (server) => {
    let db: TestDatabase
    let secondPool: Knex
    beforeAll(async () => {
      db = await server.createDatabase()
      // Another app process: its own pool on the same database.
      secondPool = knex(db.config)
    })
    afterAll(async () => {
      await secondPool?.destroy()
      await db?.destroy()
    })

    it('creates its table on the first attempt and shares one count between two app instances', async () => {
      const limits = (pool: Knex): RateLimitOptions => ({ store: { knex: pool }, ip: { attempts: 4 }, identifier: { attempts: 3 } })
      const one = rateLimitedApp({ rateLimit: limits(db.knex) }, 'loopback')
      const two = rateLimitedApp({ rateLimit: limits(secondPool) }, 'loopback')
      expect(await db.knex.schema.hasTable('portcullis_rate_limit')).toBe(false)
      // Per identifier, from different addresses, alternating instances.
      expect(outcome(await browserAt(one.app, '192.0.2.1').signIn(wrong('ada')))).toBe('wrong password')
      expect(outcome(await browserAt(two.app, '192.0.2.2').signIn(wrong('ada')))).toBe('wrong password')
      expect(outcome(await browserAt(one.app, '192.0.2.3').signIn(wrong('ada')))).toBe('wrong password')
      const refused = await browserAt(two.app, '192.0.2.4').signIn(right)
      expect(outcome(refused)).toBe('refused')
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800)
      // Per address, different identifiers.
      for (const [app, name] of [[one.app, 'b'], [two.app, 'c'], [one.app, 'd'], [two.app, 'e']] as const) {
        expect(outcome(await browserAt(app, '198.51.100.7').signIn(wrong(name)))).toBe('wrong password')
      }
      expect(outcome(await browserAt(two.app, '198.51.100.7').signIn(wrong('f')))).toBe('refused')
      expect(one.authorizeCalls() + two.authorizeCalls()).toBe(7)

      const rows = (await db.knex('portcullis_rate_limit').select('key', 'points')) as { key: string; points: number }[]
      expect(rows.find((row) => row.key === 'portcullis:ip:198.51.100.7')?.points).toBe(5)
      // Identifiers are stored as keyed hashes, never in clear.
      const identifierRows = rows.filter((row) => row.key.startsWith('portcullis:id:'))
      expect(identifierRows.map((row) => row.key)).toEqual(expect.arrayContaining([expect.stringMatching(/^portcullis:id:[0-9a-f]{64}$/)]))
      expect(JSON.stringify(rows)).not.toContain('ada')
    })

    it("clears the identifier's count in the table on a successful sign-in", async () => {
      const { app } = rateLimitedApp({ rateLimit: { store: { knex: db.knex }, keyPrefix: 'clears', identifier: { attempts: 2 } } })
      const client = browser(app)
      const outcomes = []
      for (const fields of [wrong(), right, wrong(), wrong(), right]) outcomes.push(outcome(await client.signIn(fields)))
      expect(outcomes).toEqual(['wrong password', 'signed in', 'wrong password', 'wrong password', 'refused'])
    })

    it('with createTable: false and no table, counts in memory and logs why, instead of locking out or letting through', async () => {
      const { app, log } = rateLimitedApp({ rateLimit: { store: { knex: db.knex, tableName: 'missing_rate_limit', createTable: false }, ip: { attempts: 2 }, identifier: false } })
      const client = browser(app)
      expect(outcome(await client.signIn(wrong('a')))).toBe('wrong password')
      expect(outcome(await client.signIn(right))).toBe('signed in')
      expect(outcome(await client.signIn(wrong('b')))).toBe('wrong password')
      expect(outcome(await client.signIn(wrong('c')))).toBe('refused')
      expect(await db.knex.schema.hasTable('missing_rate_limit')).toBe(false)
      const outage = log.error.filter((line) => line.startsWith('RateLimitStoreError'))
      expect(outage).toHaveLength(1)
      expect(outage[0]).toMatch(/The rate-limit store \((SQLite|PostgreSQL|MySQL)\) failed: .*missing_rate_limit/)
    })
  })
}

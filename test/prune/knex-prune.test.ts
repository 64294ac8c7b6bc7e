/**
 * Pruning on SQLite, PostgreSQL and MariaDB: `KnexAdapter.prune` and `pruneRateLimits` delete expired
 * rows in batches and never a valid one; two pools (two app servers) pruning at once do not both
 * work; a prune under traffic fails no session read; the `prune` option runs it in the background,
 * logs its failures, stops when its signal aborts, and never keeps a process alive. No timings are
 * asserted. The last test runs the built package (`npm test` builds first).
 */
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import knexFactory, { type Knex } from 'knex'
import Portcullis, { type LoggerInstance } from 'portcullis'
import { KnexAdapter, migrationSource, pruneRateLimits, resolveNaming, type KnexNamingPreset } from 'portcullis/adapters/knex'
import { adapterPruneLock, rateLimitPruneLock, withPruneLock } from '../../src/features/prune/knex.js'
import Credentials from 'portcullis/providers/credentials'
import { ensureTable } from 'portcullis/security/rate-limit-stores'
import { describeWithDatabase, type DatabaseKind, type DatabaseServer, type TestDatabase } from '../support/databases.js'
import { rejectionOf } from '../support/rejection.js'
import { STEP_LIMIT_MS, until } from '../support/time-limits.js'

const KINDS: readonly DatabaseKind[] = ['sqlite', 'postgres', 'mariadb']
const providers = [Credentials({ authorize: async () => null })]
const HOUR = 3600_000

/** Inserts `count` sessions of one new user, expiring at `expires(i)`, straight into the table. */
async function insertSessions(db: Knex, naming: KnexNamingPreset, count: number, expires: (i: number) => Date): Promise<string> {
  const { tables, users, sessions } = resolveNaming(naming)
  const userId = randomUUID()
  await db(tables.users).insert({ [users.id]: userId, [users.email]: `${userId}@example.com` })
  const rows = Array.from({ length: count }, (_, i) => ({
    [sessions.id]: randomUUID(),
    [sessions.sessionToken]: randomUUID(),
    [sessions.userId]: userId,
    // Written as the adapter writes them (UTC text on MariaDB).
    [sessions.expires]: db.client.dialect === 'mysql' ? expires(i).toISOString().slice(0, 23).replace('T', ' ') : expires(i),
  }))
  await db.batchInsert(tables.sessions, rows, 500)
  return userId
}

async function count(db: Knex, table: string): Promise<number> {
  const row = await db(table).count({ n: '*' }).first()
  return Number(row?.n)
}

for (const kind of KINDS) {
  await describeWithDatabase(kind, `pruning on ${kind}`, (server: DatabaseServer) => {
    for (const naming of ['default', 'snake_case'] as const) {
      describe(`${naming} names`, () => {
        let db: TestDatabase
        const names = resolveNaming(naming)
        const adapter = () => KnexAdapter(db.knex, { naming })
        beforeAll(async () => {
          db = await server.createDatabase()
          await db.knex.migrate.latest({ migrationSource: migrationSource({ naming }) })
        })
        afterAll(() => db?.destroy())

        it('deletes expired sessions and verification tokens in batches, keeps every valid one, and counts them', async () => {
          const now = new Date('2031-05-06T07:08:09.123Z')
          const expiredUser = await insertSessions(db.knex, naming, 23, (i) => new Date(now.getTime() - 1 - i * HOUR))
          const validUser = await insertSessions(db.knex, naming, 9, (i) => new Date(now.getTime() + 1 + i * HOUR))
          // One that expires at the very instant: not expired yet (`expires < now` deletes).
          const edgeUser = await insertSessions(db.knex, naming, 1, () => now)
          const token = (expires: Date) => ({ identifier: `${randomUUID()}@example.com`, token: randomUUID(), expires })
          for (let i = 0; i < 12; i++) await adapter().createVerificationToken(token(new Date(now.getTime() - 1 - i * 60_000)))
          const validToken = token(new Date(now.getTime() + 60_000))
          await adapter().createVerificationToken(validToken)

          const deletes: string[] = []
          const record = (query: { sql: string }) => {
            if (/^delete/i.test(query.sql) && !query.sql.includes('portcullis_lock')) deletes.push(query.sql)
          }
          db.knex.on('query', record)
          try {
            expect(await adapter().prune({ now, batchSize: 5 })).toEqual({ sessions: 23, verificationTokens: 12, apiKeys: 0 })
          } finally {
            db.knex.removeListener('query', record)
          }
          // 23 rows in batches of 5: five statements (the last deletes 3); 12 tokens: three; no API keys: one that finds none.
          expect(deletes).toHaveLength(9)

          const left = async (userId: string) => Number((await db.knex(names.tables.sessions).where({ [names.sessions.userId]: userId }).count({ n: '*' }).first())?.n)
          expect([await left(expiredUser), await left(validUser), await left(edgeUser)]).toEqual([0, 9, 1])
          expect(await count(db.knex, names.tables.verificationTokens)).toBe(1)
          expect(await adapter().useVerificationToken(validToken)).toEqual(validToken)
          // Nothing left to do.
          expect(await adapter().prune({ now })).toEqual({ sessions: 0, verificationTokens: 0, apiKeys: 0 })
        })

        it('prunes by the current time by default: a session that expired a moment ago goes, a live one stays', async () => {
          const user = await adapter().createUser({ email: `${randomUUID()}@example.com` })
          const gone = await adapter().createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() - 1000) })
          const live = await adapter().createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + HOUR) })
          expect((await adapter().prune())?.sessions).toBeGreaterThanOrEqual(1)
          expect(await adapter().getSessionAndUser(gone.sessionToken)).toBeNull()
          expect((await adapter().getSessionAndUser(live.sessionToken))?.session).toEqual(live)
        })

        it('rejects a batch size that is not a whole number from 1 to 100000', async () => {
          await expect(adapter().prune({ batchSize: 0 })).rejects.toThrow(/batchSize/)
          await expect(adapter().prune({ batchSize: 1.5 })).rejects.toThrow(/batchSize/)
        })
      })
    }

    describe('locking and traffic', () => {
      let db: TestDatabase
      let other: Knex
      beforeAll(async () => {
        db = await server.createDatabase()
        await db.knex.migrate.latest({ migrationSource: migrationSource() })
        other = knexFactory(db.config)
      })
      afterAll(async () => {
        await other?.destroy()
        await db?.destroy()
      })

      it('while one pool (one app server) holds the prune lock, another’s prune gets null and deletes nothing; released, it prunes', async () => {
        const now = new Date()
        await insertSessions(db.knex, 'default', 30, (i) => new Date(now.getTime() - HOUR - i))
        const held = await withPruneLock(db.knex, adapterPruneLock({ sessions: 'Session', verificationTokens: 'VerificationToken' }), async () => {
          const [second, third] = await Promise.all([KnexAdapter(other).prune({ now }), KnexAdapter(other).prune({ now })])
          return { second, third, left: await count(other, 'Session') }
        })
        expect(held).toEqual({ second: null, third: null, left: 30 })
        expect(await KnexAdapter(other).prune({ now })).toEqual({ sessions: 30, verificationTokens: 0, apiKeys: 0 })
      })

      it('of two pools pruning at the same moment, one does the work: the other gets null, or finds nothing left', async () => {
        const now = new Date()
        await insertSessions(db.knex, 'default', 2000, (i) => new Date(now.getTime() - HOUR - i))
        const results = await Promise.all([KnexAdapter(db.knex).prune({ now, batchSize: 100 }), KnexAdapter(other).prune({ now, batchSize: 100 })])
        const worked = results.filter((result) => result !== null && result.sessions > 0)
        expect(worked).toHaveLength(1)
        expect(worked[0]?.sessions).toBe(2000)
      })

      it('the rate-limit prune has a lock of its own: held elsewhere, pruneRateLimits gets null', async () => {
        await ensureTable(db.knex, 'portcullis_rate_limit')
        await db.knex('portcullis_rate_limit').insert({ key: 'old', points: 1, expire: Date.now() - 1000 })
        const held = await withPruneLock(db.knex, rateLimitPruneLock('portcullis_rate_limit'), () => pruneRateLimits(other))
        expect(held).toBeNull()
        expect(await pruneRateLimits(other)).toEqual({ rateLimits: 1 })
      })

      it('a prune under traffic fails no session read or write', async () => {
        const now = new Date()
        await insertSessions(db.knex, 'default', 6000, (i) => new Date(now.getTime() - HOUR - i))
        const adapter = KnexAdapter(other)
        const user = await adapter.createUser({ email: `${randomUUID()}@example.com` })
        const live = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + HOUR) })

        let done = false
        const pruning = KnexAdapter(db.knex)
          .prune({ batchSize: 200 })
          .finally(() => {
            done = true
          })
        let reads = 0
        const failures: unknown[] = []
        while (!done || reads < 20) {
          try {
            const found = await adapter.getSessionAndUser(live.sessionToken)
            if (found?.session.id !== live.id) failures.push(found)
            await adapter.updateSession({ sessionToken: live.sessionToken, expires: new Date(Date.now() + HOUR) })
            await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + HOUR) })
          } catch (error) {
            failures.push(error)
          }
          reads++
        }
        expect(failures).toEqual([])
        expect((await pruning)?.sessions).toBe(6000)
        expect(await count(db.knex, 'Session')).toBe(reads + 1)
      })
    })

    describe('the rate-limit table', () => {
      let db: TestDatabase
      beforeAll(async () => {
        db = await server.createDatabase()
      })
      afterAll(() => db?.destroy())

      it('pruneRateLimits deletes rows whose window has ended, keeps open and endless ones; a missing table has nothing to prune', async () => {
        expect(await pruneRateLimits(db.knex, { tableName: 'rl_missing' })).toEqual({ rateLimits: 0 })
        await ensureTable(db.knex, 'rl_test')
        const now = Date.now()
        const rows = [
          ...Array.from({ length: 17 }, (_, i) => ({ key: `old:${i}`, points: 3, expire: now - 1 - i * 1000 })),
          ...Array.from({ length: 4 }, (_, i) => ({ key: `open:${i}`, points: 1, expire: now + 60_000 + i })),
          { key: 'endless', points: 1, expire: null },
        ]
        await db.knex('rl_test').insert(rows)
        expect(await pruneRateLimits(db.knex, { tableName: 'rl_test', batchSize: 4, now: new Date(now) })).toEqual({ rateLimits: 17 })
        const left = (await db.knex('rl_test').select('key').orderBy('key')).map((row: { key: string }) => row.key)
        expect(left).toEqual(['endless', 'open:0', 'open:1', 'open:2', 'open:3'])
      })

      it('the migration indexes an existing rate-limit table’s expire (and the store creates new ones with it)', async () => {
        const own = await server.createDatabase()
        try {
          await ensureTable(own.knex, 'portcullis_rate_limit')
          await own.knex.migrate.latest({ migrationSource: migrationSource() })
          // Running it again on an indexed table is harmless, and the store's table already has it.
          await ensureTable(own.knex, 'rl_new')
          expect(await indexNames(own, 'portcullis_rate_limit')).toContain('portcullis_rate_limit_expire_index')
          expect(await indexNames(own, 'rl_new')).toContain('rl_new_expire_index')
          expect(await indexNames(own, 'Session')).toContain('session_expires_index')
          expect(await indexNames(own, 'VerificationToken')).toContain('verificationtoken_expires_index')
        } finally {
          await own.destroy()
        }
      })
      it('a rate-limit table whose expire index cannot be created (its name taken by another table) fails, rather than being used without it', async () => {
        // Index names are per schema on PostgreSQL and SQLite; per table on MySQL, where nothing clashes.
        await db.knex.schema.createTable('rl_clash_other', (table) => void table.bigInteger('expire').index('rl_clash_expire_index'))
        if (kind === 'mariadb') {
          await ensureTable(db.knex, 'rl_clash')
          expect(await indexNames(db, 'rl_clash')).toContain('rl_clash_expire_index')
          return
        }
        // The driver's error, read by its message: better-sqlite3's may come from another test file's realm.
        const error = await rejectionOf(ensureTable(db.knex, 'rl_clash'), 'the index clash to fail the table creation')
        expect(String((error as { message?: unknown }).message)).toMatch(/rl_clash_expire_index"? already exists$/)
      })
    })

    describe('the prune option', () => {
      let db: TestDatabase
      beforeAll(async () => {
        db = await server.createDatabase()
        await db.knex.migrate.latest({ migrationSource: migrationSource() })
      })
      afterAll(() => db?.destroy())

      it('prunes sessions and the rate-limit table in the background until its signal aborts', async () => {
        await insertSessions(db.knex, 'default', 50, () => new Date(Date.now() - HOUR))
        const valid = await insertSessions(db.knex, 'default', 5, () => new Date(Date.now() + HOUR))
        await ensureTable(db.knex, 'portcullis_rate_limit')
        await db.knex('portcullis_rate_limit').insert([
          { key: 'old', points: 1, expire: Date.now() - 1000 },
          { key: 'open', points: 1, expire: Date.now() + HOUR },
        ])
        const stop = new AbortController()
        const debug: unknown[][] = []
        const logger: Partial<LoggerInstance> = { debug: (...line) => debug.push(line), error: (...line) => debug.push(['error', ...line]) }
        Portcullis({
          providers,
          secret: 'x'.repeat(32),
          adapter: KnexAdapter(db.knex),
          rateLimit: { store: { knex: db.knex } },
          logger,
          prune: { everyMinutes: 0.002, signal: stop.signal },
        })
        try {
          await until('the expired rows pruned', async () => (await count(db.knex, 'Session')) === 5 && (await count(db.knex, 'portcullis_rate_limit')) === 1)
          await until('the prune logged its rate-limit rows', async () => debug.some((line) => /rate_limit|rateLimits/.test(String(line[1]))))
        } finally {
          stop.abort()
        }
        expect((await db.knex('Session').distinct('userId')).map((row: { userId: string }) => row.userId)).toEqual([valid])
        expect(debug.filter((line) => line[0] === 'error')).toEqual([])
        expect(debug.some((line) => line[0] === 'Prune' && /\d+ sessions/.test(String(line[1])))).toBe(true)

        // Stopped: new expired rows stay.
        await insertSessions(db.knex, 'default', 3, () => new Date(Date.now() - HOUR))
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(await count(db.knex, 'Session')).toBe(8)
      })

      if (server.kind === 'postgres') {
        it('the docs’ cron one-liner prunes with plain node (built package)', async () => {
          await insertSessions(db.knex, 'default', 4, () => new Date(Date.now() - HOUR))
          const readme = readFileSync(new URL('../../docs/database.md', import.meta.url), 'utf8')
          const line = /^node --input-type=module -e "(.+)"$/m.exec(readme)?.[1]
          expect(line).toBeDefined()
          const { host, port, user, database } = (db.config.connection as { host: string; port: number; user: string; database: string })
          const run = spawnSync(process.execPath, ['--input-type=module', '-e', line!], {
            cwd: fileURLToPath(new URL('../..', import.meta.url)),
            encoding: 'utf8',
            timeout: STEP_LIMIT_MS,
            env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: `postgres://${user}@${host}:${port}/${database}` },
          })
          expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' })
          expect(run.stdout).toMatch(/\{ sessions: \d+, verificationTokens: 0, apiKeys: 0 \} \{ rateLimits: \d+ \}/)
          expect(await db.knex('Session').where('expires', '<', new Date()).count({ n: '*' }).first()).toEqual({ n: '0' })
        })
      }

      it('logs a failing prune and keeps going; the failure reaches no request', async () => {
        const errors: unknown[][] = []
        const stop = new AbortController()
        const broken = { ...KnexAdapter(db.knex), prune: async () => Promise.reject(new Error('database on fire')) }
        Portcullis({ providers, secret: 'x'.repeat(32), adapter: broken, logger: { error: (...line) => errors.push(line) }, prune: { everyMinutes: 0.002, signal: stop.signal } })
        try {
          await until('two prune errors logged', async () => errors.length >= 2)
        } finally {
          stop.abort()
        }
        expect(errors[0]?.[0]).toBe('AdapterError')
        expect(String(errors[0]?.slice(1).join(' '))).toMatch(/prune\(\) failed.*database on fire/)
      })
    })
  })
}

describe('the prune option, checked at init', () => {
  const db = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  afterAll(() => db.destroy())
  const base = { providers, secret: 'x'.repeat(32) }

  it('rejects an interval that is not a positive number of minutes', () => {
    for (const everyMinutes of [0, -1, Number.NaN, Infinity, '60' as unknown as number]) {
      expect(() => Portcullis({ ...base, adapter: KnexAdapter(db), prune: { everyMinutes } })).toThrow(/prune\.everyMinutes/)
    }
  })

  it('rejects a prune with nothing to prune: no adapter with prune(), no Knex rate-limit store', () => {
    expect(() => Portcullis({ ...base, prune: { everyMinutes: 60 } })).toThrow(/nothing to prune/)
    // Stopped at once: its first prune falls at a random moment of the hour, which the Jest worker can outlive.
    const stop = new AbortController()
    expect(() => Portcullis({ ...base, rateLimit: { store: { knex: db } }, prune: { everyMinutes: 60, signal: stop.signal } })).not.toThrow()
    stop.abort()
  })

  it('never keeps a process alive: an app that is done exits although its prune timer is set (built package, plain node)', () => {
    const script = `import knex from 'knex'
import Portcullis from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
await db.migrate.latest({ migrationSource: migrationSource() })
Portcullis({ providers: [Credentials({ authorize: async () => null })], secret: 'x'.repeat(32), adapter: KnexAdapter(db), prune: { everyMinutes: 1 } })
await db.destroy()
console.log('done')
`
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: STEP_LIMIT_MS, env: { ...process.env, NODE_OPTIONS: '' } })
    expect({ signal: run.signal, status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({ signal: null, status: 0, stdout: 'done', stderr: '' })
  })

  it('rejects a signal that is not an AbortSignal', () => {
    expect(() => Portcullis({ ...base, adapter: KnexAdapter(db), prune: { everyMinutes: 60, signal: {} as AbortSignal } })).toThrow(/AbortSignal/)
  })
})

async function indexNames(db: TestDatabase, table: string): Promise<string[]> {
  switch (db.kind) {
    case 'postgres':
      return ((await db.knex.raw('select indexname as name from pg_indexes where tablename = ?', [table])) as { rows: { name: string }[] }).rows.map((row) => row.name)
    case 'mariadb':
      return ((await db.knex.raw('select index_name as name from information_schema.statistics where table_schema = database() and table_name = ?', [table])) as [{ name: string }[]])[0].map((row) => row.name)
    default:
      return ((await db.knex.raw("select name from sqlite_master where type = 'index' and tbl_name = ?", [table])) as { name: string }[]).map((row) => row.name)
  }
}

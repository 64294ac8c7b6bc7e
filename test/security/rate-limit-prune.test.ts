/**
 * `pruneRateLimits` from the sources on SQLite (test/prune/knex-prune.test.ts runs the built
 * package on every database, the lock between processes included): what it refuses, a missing
 * table, and which rows go.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import { migrationSource } from '../../src/adapters/knex/index.js'
import { pruneRateLimits } from '../../src/features/prune/rate-limits.js'
import { ensureTable } from '../../src/security/rate-limit-stores.js'

let db: Knex
beforeAll(async () => {
  db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
})
afterAll(async () => {
  await db?.destroy()
})

const NOW = new Date(Date.UTC(2026, 10, 26, 12))

describe('pruneRateLimits', () => {
  it('refuses what is not a Knex instance, and a now that is not a valid Date', async () => {
    await expect(pruneRateLimits({} as Knex)).rejects.toThrow(new TypeError('pruneRateLimits(knex): pass a Knex instance.'))
    await expect(pruneRateLimits((() => {}) as unknown as Knex)).rejects.toThrow(new TypeError('pruneRateLimits(knex): pass a Knex instance.'))
    await expect(pruneRateLimits({ schema: {} } as unknown as Knex)).rejects.toThrow(new TypeError('pruneRateLimits(knex): pass a Knex instance.'))
    await expect(pruneRateLimits(db, { now: new Date(Number.NaN) })).rejects.toThrow(new TypeError('pruneRateLimits: now must be a valid Date.'))
    await expect(pruneRateLimits(db, { now: NOW.getTime() as unknown as Date })).rejects.toThrow(new TypeError('pruneRateLimits: now must be a valid Date.'))
  })

  it('has nothing to prune in a table that does not exist', async () => {
    expect(await pruneRateLimits(db, { tableName: 'no_such_table', now: NOW })).toEqual({ rateLimits: 0 })
  })

  it('deletes the rows whose window ended before now, and keeps open windows and rows without an expiry', async () => {
    await ensureTable(db, 'portcullis_rate_limit')
    await db('portcullis_rate_limit').insert([
      { key: 'ended', points: 3, expire: NOW.getTime() - 1 },
      { key: 'open', points: 3, expire: NOW.getTime() + 60_000 },
      { key: 'forever', points: 3, expire: null },
    ])
    expect(await pruneRateLimits(db, { now: NOW })).toEqual({ rateLimits: 1 })
    expect((await db('portcullis_rate_limit').select('key').orderBy('key')).map(({ key }) => key)).toEqual(['forever', 'open'])
    // Without `now`: the current time.
    expect(await pruneRateLimits(db)).toEqual({ rateLimits: 1 })
    expect((await db('portcullis_rate_limit').select('key')).map(({ key }) => key)).toEqual(['forever'])
  })

  it('prunes a table of another name, as the store created it', async () => {
    await ensureTable(db, 'app_limits')
    await db('app_limits').insert([{ key: 'ended', points: 1, expire: NOW.getTime() - 1 }, { key: 'open', points: 1, expire: NOW.getTime() + 1 }])
    expect(await pruneRateLimits(db, { tableName: 'app_limits', now: NOW })).toEqual({ rateLimits: 1 })
    expect((await db('app_limits').select('key')).map(({ key }) => key)).toEqual(['open'])
  })
})

/**
 * The shared stores of the sign-in limits, as rate-limiter-flexible limiters: Redis, and a table
 * of the app's database through Knex (PostgreSQL, MySQL/MariaDB, SQLite). Loaded with the limiter,
 * on the first sign-in attempt.
 *
 * The table is created here with Knex rather than by rate-limiter-flexible, whose SQL limiters
 * create theirs in the constructor without waiting (an attempt made meanwhile fails), and on MySQL
 * also `CREATE DATABASE` one of their own. Its columns are the ones their queries expect.
 *
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki
 */
import type { Knex } from 'knex'
import {
  RateLimiterMySQL,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterSQLite,
  type RateLimiterAbstract,
  type RateLimiterStoreAbstract,
} from 'rate-limiter-flexible'
import { createTableUnlessExists } from '../adapters/knex/create-table.js'
import { rateLimitExpireIndex } from '../adapters/knex/migrations.js'
import type { RateLimitWindow } from '../types.js'
import type { RateLimitDialect, ResolvedRateLimitStore } from './rate-limit-config.js'

/** A shared store: builds the limiter of one window. */
export interface SharedStore {
  /** For log lines: `Redis`, `PostgreSQL`, … */
  readonly label: string
  /**
   * The limiter counting `window` under `keyPrefix`. Rejects while the store cannot be set up (the
   * table cannot be created); the next call tries again.
   */
  limiter(keyPrefix: string, window: Readonly<RateLimitWindow>): Promise<RateLimiterAbstract>
}

/** The shared store of a resolved `rateLimit.store`, or undefined for the in-memory one. */
export function sharedStore(store: ResolvedRateLimitStore): SharedStore | undefined {
  switch (store.type) {
    case 'memory':
      return undefined
    case 'redis':
      return redisStore(store.client)
    case 'knex':
      return knexStore(store.knex as unknown as Knex, store.dialect, store.tableName, store.createTable)
  }
}

function redisStore(client: object): SharedStore {
  // ioredis has defineCommand (the limiter's Lua script is defined with it); node-redis has not.
  const useRedisPackage = typeof (client as { defineCommand?: unknown }).defineCommand !== 'function'
  return {
    label: 'Redis',
    limiter: async (keyPrefix, window) =>
      new RateLimiterRedis({ storeClient: client, useRedisPackage, keyPrefix, points: window.attempts, duration: window.windowSeconds }),
  }
}

const LABELS: Record<RateLimitDialect, string> = { postgres: 'PostgreSQL', mysql: 'MySQL', sqlite: 'SQLite' }

function knexStore(knex: Knex, dialect: RateLimitDialect, tableName: string, createTable: boolean): SharedStore {
  let ready: Promise<{ dbName?: string }> | undefined
  const setUp = async (): Promise<{ dbName?: string }> => {
    if (createTable) await ensureTable(knex, tableName)
    // rate-limiter-flexible's MySQL queries name the database; it is the connection's own.
    if (dialect !== 'mysql') return {}
    const result = (await knex.raw('select database() as name')) as unknown as [Array<{ name: string | null }>]
    const name = result[0][0]?.name
    if (!name) throw new Error('The Knex connection has no database selected: give connection.database.')
    return { dbName: name }
  }
  return {
    label: LABELS[dialect],
    async limiter(keyPrefix, window) {
      // One setup per store, shared by its limiters; a failed one is tried again on the next call.
      ready ??= setUp().catch((error: unknown) => {
        ready = undefined
        throw error
      })
      const { dbName } = await ready
      const options = { storeClient: knex, storeType: 'knex', tableName, tableCreated: true, keyPrefix, points: window.attempts, duration: window.windowSeconds }
      const limiter: RateLimiterStoreAbstract =
        dialect === 'postgres' ? new RateLimiterPostgres(options) : dialect === 'mysql' ? new RateLimiterMySQL({ ...options, dbName }) : new RateLimiterSQLite(options)
      return limiter
    },
  }
}

/**
 * Creates the counting table when it is missing: `key` (primary), `points`, `expire` (epoch ms), in
 * that order (rate-limiter-flexible's MySQL and PostgreSQL inserts give no column list), by one of
 * several processes starting at once.
 */
export async function ensureTable(knex: Knex, tableName: string): Promise<void> {
  await createTableUnlessExists(knex, tableName, (table) => {
    // Binary collation on MySQL/MariaDB (Knex emits `collate` for them only): keys differ by case.
    table.string('key', 255).collate('utf8mb4_bin').notNullable().primary()
    table.integer('points').notNullable().defaultTo(0)
    // Pruning (pruneRateLimits) deletes by it, a batch at a time.
    table.bigInteger('expire').nullable().index(rateLimitExpireIndex(tableName))
  })
}

/**
 * The `session.store` option, resolved at init into a store whose every failure is logged once
 * and becomes an `AdapterError` (as the adapter's are), so an outage fails the request clearly and
 * the next request tries again. Loads no database or Redis driver: the app passes its client in.
 */
import type { Knex } from 'knex'
import { AdapterError, InvalidConfigurationError } from '../../errors.js'
import { describeError, redactError } from '../../events.js'
import type { LoggerInstance } from '../../logger.js'
import type { RateLimitStore, SessionStoreOption } from '../../types.js'
import { DEFAULT_STORE_TIMEOUTS, withDeadline, type StoreTimeouts } from './deadline.js'
import { knexStore } from './knex.js'
import { memoryStore } from './memory.js'
import { redisStore, type SessionRedis } from './redis.js'
import type { SessionStore } from './types.js'

const DEFAULT_TABLE = 'portcullis_session_store'
const DEFAULT_PREFIX = 'portcullis:session'
const LABELS: Record<string, string> = { pg: 'PostgreSQL', postgres: 'PostgreSQL', postgresql: 'PostgreSQL', mysql: 'MySQL', mysql2: 'MySQL', sqlite3: 'SQLite', 'better-sqlite3': 'SQLite' }

/** How long the store's setup (the Knex store's table, created on first use) may take. */
const PREPARE_TIMEOUT_MS = 30_000
/** The store's reads; every other method writes. */
const READS = new Set(['sessionStates', 'listSessions', 'changesSince', 'get'])

/**
 * @param option `session.store`.
 * @param timeouts `session.storeTimeoutMs`: how long a read or a write of a shared store may take.
 * @throws InvalidConfigurationError naming what to change.
 */
export function resolveSessionStore(option: SessionStoreOption | undefined, logger: LoggerInstance, timeouts: StoreTimeouts = DEFAULT_STORE_TIMEOUTS): SessionStore | undefined {
  if (option === undefined) return undefined
  if (option === 'memory') return guardStore(memoryStore(), logger, undefined)
  if (option !== null && typeof option === 'object' && 'knex' in option) {
    const knex = option.knex as unknown as Knex
    if (typeof (knex as unknown) !== 'function' || typeof knex.raw !== 'function') {
      throw new InvalidConfigurationError('session.store.knex must be a Knex instance, e.g. knex({ client: "pg", connection: process.env.DATABASE_URL }).')
    }
    const client = (knex.client as { config?: { client?: unknown } } | undefined)?.config?.client
    const label = typeof client === 'string' && Object.hasOwn(LABELS, client) ? LABELS[client] : undefined
    if (!label) {
      throw new InvalidConfigurationError(`session.store.knex uses the Knex client ${JSON.stringify(client)}; the session store works with "pg", "mysql2" (MySQL, MariaDB), "better-sqlite3" and "sqlite3".`)
    }
    const tableName = option.tableName ?? DEFAULT_TABLE
    if (typeof tableName !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(tableName)) {
      throw new InvalidConfigurationError(`session.store.tableName must be a plain table name (letters, digits, "_", at most 63 characters); got ${JSON.stringify(tableName)}.`)
    }
    const createTable = option.createTable ?? true
    if (typeof createTable !== 'boolean') throw new InvalidConfigurationError('session.store.createTable must be true or false.')
    return guardStore(knexStore(knex, tableName, createTable, label), logger, timeouts)
  }
  if (option !== null && typeof option === 'object' && 'redis' in option) {
    // hgetall in lower case tells ioredis from node-redis (hGetAll), whose eval takes other arguments.
    const client = option.redis as unknown as SessionRedis & { hgetall?: unknown }
    if (!client || typeof client !== 'object' || typeof client.eval !== 'function' || typeof client.hgetall !== 'function') {
      throw new InvalidConfigurationError('session.store.redis must be an ioredis client, e.g. new Redis(process.env.REDIS_URL) from ioredis.')
    }
    const prefix = option.keyPrefix ?? DEFAULT_PREFIX
    if (typeof prefix !== 'string' || prefix.length === 0 || prefix.length > 100) {
      throw new InvalidConfigurationError('session.store.keyPrefix must be a non-empty string of at most 100 characters.')
    }
    return guardStore(redisStore(client, prefix), logger, timeouts)
  }
  throw new InvalidConfigurationError("session.store must be 'memory', { knex } or { redis }.")
}

/**
 * The store several processes share for the refresh lease: `session.store`, else the rate-limit
 * store when it is a shared one (its Knex instance or Redis client), else none (per process).
 */
export function sharedStoreOf(sessionStore: SessionStore | undefined, rateLimitStore: RateLimitStore | undefined, logger: LoggerInstance, timeouts: StoreTimeouts = DEFAULT_STORE_TIMEOUTS): SessionStore | undefined {
  if (sessionStore) return sessionStore.label === 'memory' ? undefined : sessionStore
  // Not set, 'memory', or nothing it could share.
  if (rateLimitStore === null || typeof rateLimitStore !== 'object') return undefined
  if ('knex' in rateLimitStore) return resolveSessionStore({ knex: rateLimitStore.knex }, logger, timeouts)
  // The rate limit also takes node-redis; the session store speaks ioredis only.
  const client = rateLimitStore.redis as unknown as Partial<SessionRedis> & { hgetall?: unknown }
  return typeof client.eval === 'function' && typeof client.hgetall === 'function' ? resolveSessionStore({ redis: rateLimitStore.redis as never }, logger, timeouts) : undefined
}

/**
 * @param timeouts The limits on a shared store's calls (none on the memory store's, which answer
 *   within the turn): a call still unanswered then fails as a failed one does.
 */
function guardStore(store: SessionStore, logger: LoggerInstance, timeouts: StoreTimeouts | undefined): SessionStore {
  const guarded: Record<string, unknown> = { label: store.label }
  for (const [name, method] of Object.entries(store)) {
    if (typeof method !== 'function' || name === 'prepare') continue
    const ms = timeouts && (READS.has(name) ? timeouts.readMs : timeouts.writeMs)
    guarded[name] = async (...args: unknown[]) => {
      try {
        if (store.prepare) await withDeadline(store.prepare(), PREPARE_TIMEOUT_MS, `${store.label} setup`)
        const answer = (method as (...given: unknown[]) => Promise<unknown>)(...args)
        return await (ms === undefined ? answer : withDeadline(answer, ms, `${store.label} ${name}()`))
      } catch (error) {
        const cause = redactError(error, args)
        logger.error('AdapterError', `The session store (${store.label}) failed in ${name}():`, describeError(cause))
        throw new AdapterError(`session store ${name}`, { cause })
      }
    }
  }
  return guarded as unknown as SessionStore
}

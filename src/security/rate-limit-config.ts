/**
 * The `rateLimit` option, resolved at init: defaults applied, every value checked with an error
 * naming the field to fix. Loads nothing of the limiter itself (rate-limit.ts imports that on the
 * first sign-in attempt).
 */
import { InvalidConfigurationError } from '../errors.js'
import type { RateLimitKnex, RateLimitOptions, RateLimitRedis, RateLimitWindow } from '../types.js'

/** The SQL dialects the Knex store speaks (rate-limiter-flexible's SQL limiters). */
export type RateLimitDialect = 'postgres' | 'mysql' | 'sqlite'

/** The store, resolved. */
export type ResolvedRateLimitStore =
  | { readonly type: 'memory' }
  | { readonly type: 'knex'; readonly knex: RateLimitKnex; readonly dialect: RateLimitDialect; readonly tableName: string; readonly createTable: boolean }
  | { readonly type: 'redis'; readonly client: RateLimitRedis }

/** The `rateLimit` option as the limiter reads it. */
export interface ResolvedRateLimit {
  readonly store: ResolvedRateLimitStore
  readonly ip: Readonly<RateLimitWindow> | false
  readonly identifier: Readonly<RateLimitWindow> | false
  readonly credentialsIdentifier: RateLimitOptions['credentialsIdentifier']
  readonly ipv6Subnet: number
  readonly keyPrefix: string
  /** Milliseconds a shared store may take to count an attempt before it is counted in memory. */
  readonly storeTimeoutMs: number
}

/** 50 failed attempts per 15 minutes from one address: a brute force, not an office behind one NAT mistyping. */
export const DEFAULT_IP_WINDOW: Readonly<RateLimitWindow> = Object.freeze({ attempts: 50, windowSeconds: 15 * 60 })
/** 10 failed attempts per 15 minutes on one account: 960 guesses a day at most, whatever the IPs. */
export const DEFAULT_IDENTIFIER_WINDOW: Readonly<RateLimitWindow> = Object.freeze({ attempts: 10, windowSeconds: 15 * 60 })
const DEFAULT_TABLE = 'portcullis_rate_limit'

const KNEX_DIALECTS = new Map<string, RateLimitDialect>([
  ['pg', 'postgres'],
  ['postgres', 'postgres'],
  ['postgresql', 'postgres'],
  ['mysql', 'mysql'],
  ['mysql2', 'mysql'],
  ['sqlite3', 'sqlite'],
  ['better-sqlite3', 'sqlite'],
])

/**
 * Resolves `config.rateLimit`: `false` when off, else every field with its default.
 *
 * @throws InvalidConfigurationError naming the field that cannot work.
 */
export function resolveRateLimit(option: RateLimitOptions | boolean | undefined): ResolvedRateLimit | false {
  if (option === false) return false
  if (option !== undefined && option !== true && (option === null || typeof option !== 'object')) {
    throw new InvalidConfigurationError(`rateLimit must be an object of options, or false to turn the sign-in limits off; got ${describe(option)}.`)
  }
  const options: RateLimitOptions = option === undefined || option === true ? {} : option
  const ipv6Subnet = options.ipv6Subnet ?? 64
  if (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128) {
    throw new InvalidConfigurationError(`rateLimit.ipv6Subnet must be a prefix length from 1 to 128 (64 counts one /64 network as one client); got ${describe(ipv6Subnet)}.`)
  }
  const keyPrefix = options.keyPrefix ?? 'portcullis'
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || keyPrefix.length > 100) {
    throw new InvalidConfigurationError(`rateLimit.keyPrefix must be a non-empty string of at most 100 characters; got ${describe(keyPrefix)}.`)
  }
  const storeTimeoutMs = options.storeTimeoutMs ?? 1000
  if (!Number.isInteger(storeTimeoutMs) || storeTimeoutMs < 1 || storeTimeoutMs > 2_147_483_647) {
    throw new InvalidConfigurationError(`rateLimit.storeTimeoutMs must be a whole number of milliseconds (at least 1); got ${describe(storeTimeoutMs)}.`)
  }
  if (options.credentialsIdentifier !== undefined && typeof options.credentialsIdentifier !== 'function') {
    throw new InvalidConfigurationError('rateLimit.credentialsIdentifier must be a function (credentials, provider) => string | undefined.')
  }
  return {
    store: resolveStore(options.store),
    ip: resolveWindow('ip', options.ip, DEFAULT_IP_WINDOW),
    identifier: resolveWindow('identifier', options.identifier, DEFAULT_IDENTIFIER_WINDOW),
    credentialsIdentifier: options.credentialsIdentifier,
    ipv6Subnet,
    keyPrefix,
    storeTimeoutMs,
  }
}

function resolveWindow(name: 'ip' | 'identifier', given: Partial<RateLimitWindow> | false | undefined, defaults: Readonly<RateLimitWindow>): RateLimitWindow | false {
  if (given === false) return false
  if (given !== undefined && (given === null || typeof given !== 'object')) {
    throw new InvalidConfigurationError(`rateLimit.${name} must be { attempts, windowSeconds }, or false to turn this limit off; got ${describe(given)}.`)
  }
  const attempts = given?.attempts ?? defaults.attempts
  const windowSeconds = given?.windowSeconds ?? defaults.windowSeconds
  if (!Number.isSafeInteger(attempts) || attempts < 1) {
    throw new InvalidConfigurationError(`rateLimit.${name}.attempts must be a whole number of attempts (at least 1); got ${describe(attempts)}.`)
  }
  // Whole seconds: Redis expires keys by the second.
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1) {
    throw new InvalidConfigurationError(`rateLimit.${name}.windowSeconds must be a whole number of seconds (at least 1); got ${describe(windowSeconds)}.`)
  }
  return { attempts, windowSeconds }
}

function resolveStore(store: RateLimitOptions['store']): ResolvedRateLimitStore {
  if (store === undefined || store === 'memory') return { type: 'memory' }
  if (store !== null && typeof store === 'object' && 'knex' in store) return resolveKnexStore(store)
  if (store !== null && typeof store === 'object' && 'redis' in store) {
    const client = store.redis as unknown
    if (!client || typeof client !== 'object' || typeof (client as RateLimitRedis).multi !== 'function') {
      throw new InvalidConfigurationError('rateLimit.store.redis must be a connected Redis client, e.g. new Redis(process.env.REDIS_URL) from ioredis.')
    }
    return { type: 'redis', client: client as RateLimitRedis }
  }
  throw new InvalidConfigurationError(`rateLimit.store must be 'memory', { knex } or { redis }; got ${describe(store)}.`)
}

function resolveKnexStore(store: { knex: RateLimitKnex; tableName?: string; createTable?: boolean }): ResolvedRateLimitStore {
  const knex = store.knex
  // A Knex instance is a function (the query builder) with raw/schema/client on it.
  if (typeof (knex as unknown) !== 'function' || typeof knex.raw !== 'function') {
    throw new InvalidConfigurationError('rateLimit.store.knex must be a Knex instance, e.g. knex({ client: "pg", connection: process.env.DATABASE_URL }).')
  }
  const client = (knex.client as { config?: { client?: unknown } } | undefined)?.config?.client
  const dialect = typeof client === 'string' ? KNEX_DIALECTS.get(client) : undefined
  if (!dialect) {
    throw new InvalidConfigurationError(
      `rateLimit.store.knex uses the Knex client ${typeof client === 'function' ? 'given as a class' : describe(client)}; the rate-limit table works with the clients named "pg", "mysql2" (MySQL, MariaDB), "better-sqlite3" and "sqlite3" (knex({ client: "pg" })). Use the memory or Redis store with other databases.`,
    )
  }
  const tableName = store.tableName ?? DEFAULT_TABLE
  // rate-limiter-flexible puts the name into its SQL as is (quoted), so only plain names.
  if (typeof tableName !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(tableName)) {
    throw new InvalidConfigurationError(`rateLimit.store.tableName must be a plain table name (letters, digits, "_", at most 63 characters); got ${describe(tableName)}.`)
  }
  const createTable = store.createTable ?? true
  if (typeof createTable !== 'boolean') throw new InvalidConfigurationError(`rateLimit.store.createTable must be true or false; got ${describe(createTable)}.`)
  return { type: 'knex', knex, dialect, tableName, createTable }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  // A function's String() is its source: not something to print in an error.
  if (typeof value === 'function') return 'a function'
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}

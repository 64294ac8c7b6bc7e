/**
 * Pruning the Knex rate-limit table: rows whose window has ended (`expire`, epoch milliseconds,
 * below now) count nothing any more. rate-limiter-flexible's PostgreSQL and MySQL limiters also
 * delete them, an hour late, in one unbatched statement from every process every five minutes; its
 * SQLite limiter never does.
 */
import type { Knex } from 'knex'
import { batchSizeOf, deleteExpired, rateLimitPruneLock, withPruneLock, type PruneBatchOptions } from './knex.js'

/** Options of `pruneRateLimits`. */
export interface RateLimitPruneOptions extends PruneBatchOptions {
  /** The table, as in `rateLimit.store.tableName`. Default `portcullis_rate_limit`. */
  tableName?: string
  /** Rows whose window ended before this instant are deleted. Default: now. */
  now?: Date
}

/** What `pruneRateLimits` deleted. */
// A type, not an interface: it fits `Adapter.prune`'s Record of counts.
export type RateLimitPruneResult = {
  /** Rate-limit rows whose window had ended. */
  rateLimits: number
}

/**
 * Deletes the rate-limit table's expired rows in batches (by the `expire` index of the fourth
 * migration, or of a table the store created). A row without `expire` or with a window still open
 * is never touched. Of several processes pruning at once, one works and the others resolve to
 * `null`. A missing table has nothing to prune.
 *
 * @param knex The Knex instance of `rateLimit.store.knex`.
 * @example
 * ```ts
 * import { pruneRateLimits } from 'portcullis/adapters/knex'
 * await pruneRateLimits(db) // { rateLimits: 5120 }
 * ```
 */
export async function pruneRateLimits(knex: Knex, options: RateLimitPruneOptions = {}): Promise<RateLimitPruneResult | null> {
  if (typeof knex !== 'function' || typeof (knex as { schema?: unknown }).schema !== 'object') throw new TypeError('pruneRateLimits(knex): pass a Knex instance.')
  const tableName = options.tableName ?? 'portcullis_rate_limit'
  const batchSize = batchSizeOf(options)
  const now = options.now ?? new Date()
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError('pruneRateLimits: now must be a valid Date.')
  if (!(await knex.schema.hasTable(tableName))) return { rateLimits: 0 }
  return withPruneLock(knex, rateLimitPruneLock(tableName), async (connection) => ({
    rateLimits: await deleteExpired(knex, connection, { table: tableName, key: 'key', expires: 'expire', cutoff: now.getTime() }, batchSize, options.signal),
  }))
}

/**
 * Deleting rows that can never be used again, without hurting the traffic that reads the same
 * tables: short DELETE statements of a few thousand rows each, found through an index on the
 * expiry column, and a lock so that of many app servers one prunes at a time (an advisory lock on
 * PostgreSQL, `GET_LOCK` on MySQL/MariaDB, a lock row on SQLite).
 *
 * Shared by `KnexAdapter.prune` (its method is at the end, composed into `KnexAdapter` by
 * src/adapters/knex/index.ts) and `pruneRateLimits`.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import { createTableUnlessExists } from '../../adapters/knex/create-table.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { toUtcText, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'

/** Rows per DELETE unless told otherwise: a few milliseconds of work per statement. */
export const DEFAULT_BATCH_SIZE = 5000

/** Options every prune takes. */
export interface PruneBatchOptions {
  /** Rows deleted per statement, 1 to 100,000. Default 5,000. */
  batchSize?: number
  /** Stops between two statements; what was deleted so far stays deleted and is counted. */
  signal?: AbortSignal
}

/** Options of `KnexAdapter.prune`. */
export interface KnexPruneOptions extends PruneBatchOptions {
  /** Rows that expired before this instant are deleted. Default: now. */
  now?: Date
}

/** What `KnexAdapter.prune` deleted. */
// A type, not an interface: it fits `Adapter.prune`'s Record of counts.
export type KnexPruneResult = {
  /** Expired sessions. */
  sessions: number
  /** Expired verification tokens (e-mail links never followed). */
  verificationTokens: number
  /** Expired and revoked API keys (a revoked key expires when revoked); 0 until the eighth migration has run. */
  apiKeys: number
}

/** `KnexAdapter`'s prune method. */
export interface KnexPruneMethods extends Pick<Adapter, 'prune'> {
  /**
   * Deletes expired sessions, expired verification tokens and expired or revoked API keys, a few thousand rows per statement
   * through the indexes of the fourth migration; rows still valid are never touched. Of several
   * processes pruning at once, one works and the others resolve to `null` at once.
   *
   * @example
   * ```ts
   * const counts = await KnexAdapter(db).prune() // { sessions: 1200, verificationTokens: 31, apiKeys: 2 }, or null
   * ```
   */
  prune(options?: KnexPruneOptions): Promise<KnexPruneResult | null>
}

/** One table's expired rows: those whose `expires` column is below `cutoff`. */
export interface ExpiredRows {
  table: string
  /** A unique column: the batch's rows are picked by it (PostgreSQL, SQLite). */
  key: string
  /** The indexed expiry column. */
  expires: string
  /** Rows with an expiry strictly below this are deleted, already in the column's stored form. */
  cutoff: unknown
}

/** The lock `KnexAdapter.prune` takes: one per pair of tables, so apps sharing a database with other names do not wait on each other. */
export function adapterPruneLock(tables: { sessions: string; verificationTokens: string }): string {
  return `portcullis:prune:${tables.sessions}:${tables.verificationTokens}`
}

/** The lock `pruneRateLimits` takes. */
export function rateLimitPruneLock(tableName: string): string {
  return `portcullis:prune:${tableName}`
}

/** The batch size, checked. @throws TypeError when it is not a whole number from 1 to 100,000. */
export function batchSizeOf(options: PruneBatchOptions): number {
  const size = options.batchSize ?? DEFAULT_BATCH_SIZE
  if (!Number.isInteger(size) || size < 1 || size > 100_000) throw new TypeError(`prune: batchSize must be a whole number from 1 to 100000; got ${String(size)}.`)
  return size
}

/**
 * Deletes `rows` in statements of at most `batchSize` rows, each its own transaction (no lock is
 * held between them), until a statement deletes fewer. Returns how many rows were deleted.
 *
 * @param connection A connection to run on (the one holding the lock), or undefined for the pool.
 */
export async function deleteExpired(knex: Knex, connection: unknown, rows: ExpiredRows, batchSize: number, signal?: AbortSignal): Promise<number> {
  const { table, key, expires, cutoff } = rows
  // The batch's rows are found by the expiry index (a LIMITed range scan, ordered by expiry so that
  // no planner prefers reading the table from its start), then deleted by their key.
  // - PostgreSQL: `key = any(array(subquery))`. With `key in (subquery)` the planner joins the
  //   whole table to the subquery (a Seq Scan per batch, measured in bench/prune.ts); the array
  //   is computed once and then looked up in the key's index.
  // - MySQL/MariaDB: DELETE ... LIMIT, a range scan of the expiry index (MariaDB refuses LIMIT in
  //   an IN subquery).
  // - SQLite: `key in (subquery)`: the subquery's keys go into a temporary index, then each is
  //   looked up.
  const batch = async (): Promise<number> => {
    const where = (builder: Knex.QueryBuilder) => builder.where(expires, '<', cutoff as Knex.Value).orderBy(expires)
    if (knex.client.dialect === 'postgresql') {
      const query = knex.raw('delete from ?? where ?? = any(array(select ?? from ?? where ?? < ? order by ?? limit ?))', [table, key, key, table, expires, cutoff as Knex.Value, expires, batchSize])
      return ((await (connection === undefined ? query : query.connection(connection))) as { rowCount: number }).rowCount
    }
    const query = knex.client.dialect === 'mysql' ? where(knex(table)).limit(batchSize).del() : knex(table).whereIn(key, where(knex(table).select(key)).limit(batchSize)).del()
    return (await (connection === undefined ? query : query.connection(connection))) as unknown as number
  }
  let total = 0
  for (;;) {
    if (signal?.aborted) return total
    const deleted = await batch()
    total += deleted
    if (deleted < batchSize) return total
  }
}

/** How long a SQLite lock row holds when its process dies mid-prune: after that another may prune. */
const SQLITE_LEASE_MS = 15 * 60 * 1000
/** The lock rows' table on SQLite, created on first use. */
export const SQLITE_LOCK_TABLE = 'portcullis_lock'

/**
 * Runs `work` while holding the lock `name`, or returns `null` at once when another connection (or
 * process) holds it. On PostgreSQL and MySQL/MariaDB the lock is the connection's (an advisory lock,
 * `GET_LOCK`): `work` gets that connection, and a process that dies releases it with its connection.
 * On SQLite it is a row with a lease.
 */
export async function withPruneLock<T>(knex: Knex, name: string, work: (connection: unknown) => Promise<T>): Promise<T | null> {
  const dialect = knex.client.dialect
  if (dialect !== 'postgresql' && dialect !== 'mysql') return withLockRow(knex, name, () => work(undefined))
  const connection = await knex.client.acquireConnection()
  try {
    const acquired =
      dialect === 'postgresql'
        ? ((await knex.raw('select pg_try_advisory_lock(?::bigint) as acquired', [lockKey(name)]).connection(connection)) as { rows: { acquired: boolean }[] }).rows[0]?.acquired === true
        : Number(((await knex.raw('select get_lock(?, 0) as acquired', [mysqlLockName(name)]).connection(connection)) as [{ acquired: number | null }[]])[0][0]?.acquired) === 1
    if (!acquired) return null
    try {
      return await work(connection)
    } finally {
      await knex
        .raw(dialect === 'postgresql' ? 'select pg_advisory_unlock(?::bigint)' : 'select release_lock(?)', [dialect === 'postgresql' ? lockKey(name) : mysqlLockName(name)])
        .connection(connection)
    }
  } finally {
    await knex.client.releaseConnection(connection)
  }
}

/** A 64-bit advisory lock key from the name (signed, as PostgreSQL's bigint). */
function lockKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString()
}

/** MySQL's lock names are at most 64 characters. */
function mysqlLockName(name: string): string {
  return name.length <= 64 ? name : `portcullis:${createHash('sha256').update(name).digest('hex').slice(0, 40)}`
}

async function withLockRow<T>(knex: Knex, name: string, work: () => Promise<T>): Promise<T | null> {
  await ensureLockTable(knex)
  const owner = randomUUID()
  const now = Date.now()
  // A lease its process did not release (it died) is taken over once it has run out.
  await knex(SQLITE_LOCK_TABLE).where({ name }).andWhere('expires', '<', now).del()
  await knex(SQLITE_LOCK_TABLE).insert({ name, owner, expires: now + SQLITE_LEASE_MS }).onConflict('name').ignore()
  const row = (await knex(SQLITE_LOCK_TABLE).first('owner').where({ name })) as { owner: string } | undefined
  if (row?.owner !== owner) return null
  try {
    return await work()
  } finally {
    await knex(SQLITE_LOCK_TABLE).where({ name, owner }).del()
  }
}

function ensureLockTable(knex: Knex): Promise<void> {
  return createTableUnlessExists(knex, SQLITE_LOCK_TABLE, (table) => {
    table.string('name', 255).notNullable().primary()
    table.string('owner', 64).notNullable()
    table.bigInteger('expires').notNullable()
  })
}

/** The prune method on `knex`'s sessions, verification tokens and API keys tables. */
export function knexPruneMethods(knex: Knex, { tables, sessions, verificationTokens, apiKeys }: Readonly<KnexNaming>, { utcText }: RowCodec): KnexPruneMethods {
  // Whether the eighth migration has run: asked until it has.
  let apiKeysFound = false
  return {
    async prune(options = {}) {
      const batchSize = batchSizeOf(options)
      const now = options.now ?? new Date()
      if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError('prune: now must be a valid Date.')
      // The instant in the columns' stored form (UTC text on MySQL/MariaDB, see `RowCodec.utcText`).
      const cutoff = utcText ? toUtcText(now) : now
      // Asked before the lock: SQLite's pool has one connection.
      apiKeysFound ||= await knex.schema.hasTable(tables.apiKeys)
      return withPruneLock(knex, adapterPruneLock(tables), async (connection) => ({
        sessions: await deleteExpired(knex, connection, { table: tables.sessions, key: sessions.id, expires: sessions.expires, cutoff }, batchSize, options.signal),
        verificationTokens: await deleteExpired(
          knex,
          connection,
          { table: tables.verificationTokens, key: verificationTokens.token, expires: verificationTokens.expires, cutoff },
          batchSize,
          options.signal,
        ),
        apiKeys: apiKeysFound
          ? await deleteExpired(knex, connection, { table: tables.apiKeys, key: apiKeys.id, expires: apiKeys.expiresAt, cutoff }, batchSize, options.signal)
          : 0,
      }))
    },
  }
}

/**
 * What every part of the Knex adapter shares (its base and each feature's methods): how values are
 * written and read on the app's database, the mapping of fields to columns, and the rows a feature
 * keeps per user, deleted with the user.
 */
import type { Knex } from 'knex'

export type Row = Record<string, unknown>

/** How one database's values are written and read. */
export interface RowCodec {
  /**
   * MySQL/MariaDB: dates are written and read as UTC text. mysql2 turns DATETIME values into Dates
   * through the connection's time zone (by default the process's local one), so servers in different
   * zones, or a daylight-saving change, would move every expiry.
   */
  readonly utcText: boolean
  /** The query, reading dates as text where `utcText`. */
  read<Q extends Knex.QueryBuilder>(query: Q): Q
  /** The same for a raw query (SQL built once, run with its values: see `firstRow` for its result). */
  readRaw(query: Knex.Raw): Knex.Raw
  /** `record`'s defined fields that have a column in `names`, keyed by column, dates as UTC text where `utcText`. */
  values(record: object, names: object): Row
}

/** The codec of `knex`'s database. */
export function rowCodec(knex: Knex): RowCodec {
  const utcText = knex.client.dialect === 'mysql'
  return {
    utcText,
    read: <Q extends Knex.QueryBuilder>(query: Q): Q => (utcText ? (query.options({ dateStrings: true }) as Q) : query),
    // Raw queries take options as builders do (Knex's types leave the method out).
    readRaw: (query) => (utcText ? (query as unknown as { options(options: object): Knex.Raw }).options({ dateStrings: true }) : query),
    values(record, names) {
      const row = columnsOf(record, names)
      if (utcText) for (const [column, value] of Object.entries(row)) if (value instanceof Date) row[column] = toUtcText(value)
      return row
    },
  }
}

/**
 * A feature's rows of one user (its credentials, its password, its second factor), which
 * `deleteUser` deletes with the user in one transaction.
 */
export interface UserRows {
  /**
   * Whether the feature's tables exist (their migration has run): asked before the transaction,
   * since SQLite's pool has one connection, which the transaction holds.
   */
  exist(): Promise<boolean>
  /** Deletes the user's rows. */
  remove(trx: Knex.Transaction, userId: string): Promise<void>
}

/** `record`'s defined fields, keyed by their column names. */
export function columnsOf(record: object, names: object): Row {
  const row: Row = {}
  for (const [field, value] of Object.entries(record)) {
    if (value !== undefined && Object.hasOwn(names, field)) row[(names as Record<string, string>)[field]!] = value
  }
  return row
}

export function pick<T extends object, K extends string>(record: T, fields: readonly K[]): Partial<Record<K, unknown>> {
  const picked: Partial<Record<K, unknown>> = {}
  for (const field of fields) if (field in record) picked[field] = (record as Record<string, unknown>)[field]
  return picked
}

export function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value)
}

export function nullableDate(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value)
}

/** `2031-05-06 07:08:09.123`: a UTC instant as MySQL's DATETIME(3) text. */
export function toUtcText(date: Date): string {
  return date.toISOString().slice(0, 23).replace('T', ' ')
}

/**
 * A date column's value as a `Date`: PostgreSQL's driver returns `Date`s, MySQL's UTC text (see
 * `RowCodec.utcText`), Knex stores `Date`s in SQLite as milliseconds, and other tools may write ISO strings.
 */
export function toDate(value: unknown): Date {
  if (value instanceof Date) return value
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value))
  const text = String(value)
  if (/^\d+$/.test(text)) return new Date(Number(text))
  // SQLite's CURRENT_TIMESTAMP form ("2026-01-02 03:04:05") is UTC without saying so.
  const iso = text.includes('T') ? text : text.replace(' ', 'T')
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`)
}

/** The first row of a raw select's result, whatever the driver's shape (better-sqlite3: rows; pg: `{ rows }`; mysql2: `[rows, fields]`). */
export function firstRow(result: unknown): Row | undefined {
  const rows = Array.isArray(result) ? (Array.isArray(result[0]) ? result[0] : result) : (result as { rows?: unknown[] }).rows
  return (rows?.[0] as Row | undefined) ?? undefined
}

/** A feature's `UserRows` in the tables that `table` (created by the same migration) stands for. */
export function userRowsOf(knex: Knex, table: string, remove: UserRows['remove']): UserRows {
  // Apps that have not run the feature's migration yet have no such table: deleteUser must still
  // work there. Checked until the table is found, then never again.
  let found = false
  return { exist: async () => (found ||= await knex.schema.hasTable(table)), remove }
}

/** A unique key refused the write: PostgreSQL's 23505, MySQL's ER_DUP_ENTRY, SQLite's constraint (the guarded adapter keeps the code on `cause`). */
export function isUniqueViolation(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 3; current = (current as { cause?: unknown }).cause, depth++) {
    const code = String((current as { code?: unknown }).code ?? '')
    if (code === '23505' || code === 'ER_DUP_ENTRY' || code.startsWith('SQLITE_CONSTRAINT')) return true
  }
  return false
}

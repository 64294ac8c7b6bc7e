/**
 * The tables Portcullis creates itself at run time (the session store's, the rate limit's, the
 * prune lock's): created when missing, by whichever of several processes gets there first.
 */
import type { Knex } from 'knex'

/**
 * Creates `tableName` with `build` unless it exists. A process that loses the race to create it sees
 * its CREATE TABLE fail and finds the table there. Any other failure is thrown, an index that could
 * not be created included (its name taken by another table's: index names are per schema on
 * PostgreSQL and SQLite), which would otherwise leave the table without it, unseen.
 */
export async function createTableUnlessExists(knex: Knex, tableName: string, build: (table: Knex.CreateTableBuilder) => void): Promise<void> {
  if (await knex.schema.hasTable(tableName)) return
  try {
    await knex.schema.createTable(tableName, build)
  } catch (error) {
    if (!failedCreateTable(error) || !(await knex.schema.hasTable(tableName))) throw error
  }
}

/**
 * True when the statement that failed was the CREATE TABLE (Knex starts a failed query's message with
 * its SQL). Read without `instanceof Error`: a driver's error may come from another realm (better-sqlite3
 * keeps the error class of the first context that loaded it, which under Jest is another test file's).
 */
function failedCreateTable(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' && /^create table /i.test(message)
}

/**
 * Databases for tests: SQLite (always there), and the PostgreSQL and MariaDB servers of the machine
 * or of CI. Each test suite gets its own fresh, empty database, dropped afterwards, so Jest's
 * parallel workers never see each other's rows.
 *
 * A server that does not answer skips its suites with a line saying so, unless `CI` is set: CI
 * must run them, so there an unreachable server fails the suite instead.
 *
 * @example
 * ```ts
 * import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
 *
 * await describeWithDatabase('postgres', 'database sessions on PostgreSQL', (server) => {
 *   let db: TestDatabase
 *   beforeAll(async () => { db = await server.createDatabase() })
 *   afterAll(() => db?.destroy())
 *   it('...', async () => { await db.knex('User').select() })
 * })
 * ```
 */
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import { migrationSource } from 'portcullis/adapters/knex'

/** The databases the tests know. */
export type DatabaseKind = 'sqlite' | 'postgres' | 'mariadb'

/** A fresh, empty database of its own. */
export interface TestDatabase {
  readonly kind: DatabaseKind
  /** Connected to this database. */
  readonly knex: Knex
  /** This database's Knex config: `knex(config)` opens a second, independent pool (another app server). */
  readonly config: Knex.Config
  /** Closes `knex` and deletes the database. Close any other pool opened on `config` first. */
  destroy(): Promise<void>
}

/** A database server, probed once. */
export interface DatabaseServer {
  readonly kind: DatabaseKind
  /** For messages: `PostgreSQL`, `MariaDB`, `SQLite`. */
  readonly label: string
  /** For messages: `127.0.0.1:5432`, or the SQLite driver. */
  readonly address: string
  /** Whether the server answered the probe. */
  readonly reachable: boolean
  /** Why it did not, when it did not. */
  readonly unreachableReason?: string
  /** Creates a fresh database on the server (throws when it is unreachable). */
  createDatabase(): Promise<TestDatabase>
}

/** How long the probe waits for a server. */
const PROBE_TIMEOUT_MS = 2000

/** `PG_URL` overrides it. The database in the URL is only used to create and drop the test databases. */
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
/** `MYSQL_URL` overrides it (MySQL or MariaDB). */
const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test'

interface ServerConnection {
  host: string
  port: number
  user: string
  password: string
  database: string
}

/**
 * Probes a server (one connection and `select 1`, at most ~2 s) and describes it.
 *
 * @param kind `sqlite`, `postgres` (env `PG_URL`) or `mariadb` (env `MYSQL_URL`).
 */
export async function findDatabaseServer(kind: DatabaseKind): Promise<DatabaseServer> {
  if (kind === 'sqlite') return sqliteServer()
  const client = kind === 'postgres' ? 'pg' : 'mysql2'
  const url = kind === 'postgres' ? process.env.PG_URL || DEFAULT_PG_URL : process.env.MYSQL_URL || DEFAULT_MYSQL_URL
  const admin = parseServerUrl(url, kind === 'postgres' ? 5432 : 3306)
  const label = kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'
  const address = `${admin.host}:${admin.port}`
  const unreachableReason = await probe(client, admin)
  return {
    kind,
    label,
    address,
    reachable: unreachableReason === undefined,
    ...(unreachableReason === undefined ? {} : { unreachableReason }),
    async createDatabase() {
      if (unreachableReason !== undefined) throw new Error(`${label} is not reachable at ${address}: ${unreachableReason}`)
      return createServerDatabase(kind, client, admin)
    },
  }
}

/**
 * `describe(title, body)` when the server is reachable. When it is not: without `CI`, the suite is
 * skipped (`describe.skip`, its title saying why) and a warning is printed; with `CI` set, a test
 * that fails with the reason takes its place.
 *
 * Call it at the top level of a test file with `await` (it probes the server first).
 *
 * @param kind The server to run against.
 * @param title The suite's title.
 * @param body Declares the tests; it receives the server, to create databases in `beforeAll`.
 */
export async function describeWithDatabase(kind: DatabaseKind, title: string, body: (server: DatabaseServer) => void): Promise<void> {
  const server = await findDatabaseServer(kind)
  if (server.reachable) {
    describe(title, () => body(server))
    return
  }
  const why = `${server.label} not reachable at ${server.address} (${server.unreachableReason})`
  if (isCI()) {
    describe(title, () => {
      it(`connects to ${server.label} at ${server.address} (required when CI is set)`, () => {
        throw new Error(`${why}. CI must run the ${server.label} suites: start the service, or point ${envName(kind)} at it.`)
      })
    })
    return
  }
  // Straight to stderr: Jest drops the console output of a file whose tests were all skipped.
  process.stderr.write(`\n${why}: skipping "${title}" (set CI=true to make this a failure; ${envName(kind)} overrides the address)\n`)
  describe.skip(`${title} [skipped: ${why}]`, () => body(server))
}

/**
 * A migrated database of `server` for the suite (call it inside `describeWithDatabase`'s body), its
 * tables emptied before each test; read `knex` inside tests.
 */
export function migratedDatabase(server: DatabaseServer): { readonly knex: Knex } {
  let db: TestDatabase
  beforeAll(async () => {
    db = await server.createDatabase()
    await db.knex.migrate.latest({ migrationSource: migrationSource() })
  })
  afterAll(() => db?.destroy())
  beforeEach(async () => {
    for (const table of ['SsoReplay', 'SsoDomain', 'SsoConnection', 'TeamMember', 'Team', 'Invitation', 'Member', 'Organization', 'OAuthRecord', 'ApiKey', 'VerificationToken', 'Session', 'Account', 'Password', 'Authenticator', 'RecoveryCode', 'TwoFactor', 'User']) await db.knex(table).del()
  })
  return {
    get knex() {
      return db.knex
    },
  }
}

/** `CI` is set to anything but an empty string, `0` or `false`. */
export function isCI(): boolean {
  const value = process.env.CI
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}

function envName(kind: DatabaseKind): string {
  return kind === 'postgres' ? 'PG_URL' : kind === 'mariadb' ? 'MYSQL_URL' : ''
}

function sqliteServer(): DatabaseServer {
  return {
    kind: 'sqlite',
    label: 'SQLite',
    address: 'better-sqlite3',
    reachable: true,
    async createDatabase() {
      // A file rather than `:memory:`, so a second pool (`knex(config)`) sees the same database.
      const filename = join(tmpdir(), `portcullis_${randomBytes(6).toString('hex')}.sqlite`)
      const config: Knex.Config = { client: 'better-sqlite3', connection: { filename }, useNullAsDefault: true }
      const db = knex(config)
      return {
        kind: 'sqlite',
        knex: db,
        config,
        async destroy() {
          await db.destroy()
          await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(filename + suffix, { force: true })))
        },
      }
    },
  }
}

/** `undefined` when the server answered, else why not. */
async function probe(client: string, connection: ServerConnection): Promise<string | undefined> {
  const db = knex({
    client,
    connection: { ...connection, ...(client === 'pg' ? { connectionTimeoutMillis: PROBE_TIMEOUT_MS } : { connectTimeout: PROBE_TIMEOUT_MS }) },
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: PROBE_TIMEOUT_MS,
    // The failure is reported once, as the reason; Knex would also log it.
    log: { warn: () => {}, error: () => {}, debug: () => {}, deprecate: () => {} },
  })
  try {
    await db.raw('select 1')
    return undefined
  } catch (error) {
    const { name, code, message } = error as { name?: string; code?: string; message?: string }
    if (name === 'KnexTimeoutError') return `no answer within ${PROBE_TIMEOUT_MS} ms`
    return code ?? message ?? String(error)
  } finally {
    await db.destroy()
  }
}

async function createServerDatabase(kind: 'postgres' | 'mariadb', client: string, admin: ServerConnection): Promise<TestDatabase> {
  // Lower case, letters, digits and `_`: needs no quoting on either server.
  const name = `portcullis_${randomBytes(6).toString('hex')}`
  await withAdmin(client, admin, async (db) => {
    await db.raw(`create database ${name}`)
    // A commit need not wait for its WAL to reach the disk (a crash may lose the last commits, which a
    // test database never outlives): on a loaded CI machine, a 5 s stall of one insert was seen.
    if (kind === 'postgres') await db.raw(`alter database ${name} set synchronous_commit = off`)
  })
  const config: Knex.Config = { client, connection: { ...admin, database: name } }
  const db = knex(config)
  return {
    kind,
    knex: db,
    config,
    async destroy() {
      await db.destroy()
      // WITH (FORCE) (PostgreSQL 13+) ends connections a test left open instead of failing.
      const drop = kind === 'postgres' ? `drop database if exists ${name} with (force)` : `drop database if exists ${name}`
      await withAdmin(client, admin, (adminDb) => adminDb.raw(drop))
    },
  }
}

async function withAdmin(client: string, connection: ServerConnection, run: (db: Knex) => Promise<unknown>): Promise<void> {
  const db = knex({ client, connection, pool: { min: 0, max: 1 } })
  try {
    await run(db)
  } finally {
    await db.destroy()
  }
}

function parseServerUrl(text: string, defaultPort: number): ServerConnection {
  const url = new URL(text)
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : defaultPort,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')),
  }
}

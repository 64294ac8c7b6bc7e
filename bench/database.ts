/**
 * Database-session benchmark (`npm run bench`): `auth(req, res)` with a database session against
 * the raw Knex query that fetches the same session and user (one join), on SQLite (better-sqlite3)
 * and PostgreSQL (skipped with a line when it is not reachable). Sequential, one process, the same
 * distinct session tokens for both, none due for an update (so one query per request).
 *
 * Target (issue 3): auth(req, res) at most 1.3x the raw query.
 */
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import knex, { type Knex } from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Credentials from '../src/providers/credentials.js'

const SESSIONS = 5_000
const WARMUP = 500
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const COOKIE = 'authjs.session-token'
const MAX_AGE = 30 * 24 * 60 * 60
// As in the tests (test/support/databases.ts): PG_URL overrides the server; the database is the bench's own.
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pgDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).href

interface Row {
  name: string
  meanUs: number
  queriesPerOp: number
}

/** A real Node request carrying the session cookie, as Express hands it to a route. */
function requestWithCookie(token: string): IncomingMessage {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.url = '/me'
  req.headers = { host: 'localhost:3000', cookie: `${COOKIE}=${token}`, accept: 'application/json' }
  return req
}

async function seed(db: Knex): Promise<string[]> {
  await db.migrate.latest({ migrationSource: migrationSource() })
  const adapter = KnexAdapter(db)
  const tokens: string[] = []
  // Sessions created "now": not due for an update for a day (the default updateAge).
  const expires = new Date(Date.now() + MAX_AGE * 1000)
  for (let i = 0; i < SESSIONS; i++) {
    const user = await adapter.createUser({ name: `Ada Lovelace ${i}`, email: `ada.${i}@analytical-engine.example.com`, image: `https://avatars.example.com/u/${i}` })
    const sessionToken = randomBytes(32).toString('hex')
    await adapter.createSession({ sessionToken, userId: user.id, expires })
    tokens.push(sessionToken)
  }
  return tokens
}

async function measure(tokens: string[], run: (token: string, i: number) => Promise<unknown>, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await run(tokens[i % tokens.length]!, i)
  return Number(process.hrtime.bigint() - start) / 1000 / count
}

async function benchDatabase(label: string, db: Knex): Promise<Row[]> {
  const tokens = await seed(db)
  let queries = 0
  db.on('query', () => queries++)

  // The same single join the adapter runs, written by hand: the floor for any database session read.
  const raw = async (token: string) => {
    const row = await db('Session')
      .first('Session.sessionToken', 'Session.userId', 'Session.expires', 'User.id', 'User.name', 'User.email', 'User.emailVerified', 'User.image')
      .join('User', 'User.id', 'Session.userId')
      .where('Session.sessionToken', token)
    if (!row) throw new Error('raw query found no session')
    return row
  }

  const { auth } = Portcullis({ secret: SECRET, adapter: KnexAdapter(db), providers: [Credentials({ authorize: () => null })] })
  const response = new ServerResponse(requestWithCookie(''))
  // Fresh request objects, made before timing: auth() remembers the session per request.
  let requests: IncomingMessage[] = []
  const prepare = () => {
    requests = tokens.map(requestWithCookie)
  }
  const viaAuth = async (_token: string, i: number) => {
    const session = await auth(requests[i % requests.length]!, response)
    if (!session) throw new Error('auth() found no session')
    return session
  }

  const rows: Row[] = []
  for (const [name, run] of [
    [`${label}: raw knex join`, raw],
    [`${label}: portcullis auth(req, res)`, viaAuth],
  ] as const) {
    prepare()
    await measure(tokens, run, WARMUP)
    prepare()
    queries = 0
    const meanUs = await measure(tokens, run, tokens.length)
    rows.push({ name, meanUs, queriesPerOp: queries / tokens.length })
  }
  return rows
}

async function postgres(): Promise<Knex | undefined> {
  const admin = knex({ client: 'pg', connection: pgDatabase('postgres'), pool: { min: 0, max: 1 }, acquireConnectionTimeout: 2000 })
  try {
    await admin.raw('drop database if exists portcullis_bench')
    await admin.raw('create database portcullis_bench')
  } catch (error) {
    console.log(`PostgreSQL not reachable at ${new URL(PG_URL).host} (${(error as Error).message}): its rows are skipped.`)
    return undefined
  } finally {
    await admin.destroy()
  }
  return knex({ client: 'pg', connection: pgDatabase('portcullis_bench') })
}

const results: Row[] = []
const sqlite = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
results.push(...(await benchDatabase('SQLite', sqlite)))
await sqlite.destroy()

const pg = await postgres()
if (pg) {
  results.push(...(await benchDatabase('PostgreSQL', pg)))
  await pg.destroy()
}

console.log(`\nNode ${process.version}, ${SESSIONS} distinct database sessions, sequential, none due for an update\n`)
console.log(`| ${'database session read'.padEnd(40)} | ${'mean µs/op'.padStart(10)} | ${'ops/s'.padStart(8)} | ${'queries/op'.padStart(10)} | ${'x raw'.padStart(5)} |`)
console.log(`|${'-'.repeat(42)}|${'-'.repeat(12)}|${'-'.repeat(10)}|${'-'.repeat(12)}|${'-'.repeat(7)}|`)
for (let i = 0; i < results.length; i += 2) {
  const rawMean = results[i]!.meanUs
  for (const row of results.slice(i, i + 2)) {
    console.log(
      `| ${row.name.padEnd(40)} | ${row.meanUs.toFixed(1).padStart(10)} | ${Math.round(1e6 / row.meanUs).toLocaleString('en-US').padStart(8)} | ${row.queriesPerOp.toFixed(2).padStart(10)} | ${(row.meanUs / rawMean).toFixed(2).padStart(5)} |`,
    )
  }
}
console.log('\nTarget: auth(req, res) at most 1.3x the raw query, one query per request.')

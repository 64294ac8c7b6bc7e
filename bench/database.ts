/**
 * Database-session benchmark (`npm run bench`): `auth(req, res)` with a database session against
 * the raw Knex query that fetches the same session and user (one join), on SQLite (better-sqlite3)
 * and PostgreSQL (skipped with a line when it is not reachable). Sequential, one process, the same
 * distinct session tokens for both, none due for an update (so one query per request).
 *
 * Method: 5,000 sessions per database; 500 untimed reads per row, then 7 rounds (BENCH_ROUNDS) of
 * 1,000 reads per row, the next 1,000 sessions each round (5,000 sessions, so from the sixth on again), the two rows of a database taking turns
 * (the first alternating). A row reports the median µs/op of its rounds, their spread (min–max),
 * the queries per read, and the median over its database's raw query. BENCH_QUICK=1: 1,000
 * sessions, 200 reads per round, 3 rounds. BENCH_SQLITE=0 skips SQLite (bench/settings.ts).
 *
 * Targets: auth(req, res) at most 1.2x the raw query on SQLite and 1.1x on PostgreSQL (issue 24;
 * issue 3 asked for 1.3x), one query per request.
 */
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import knex, { type Knex } from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Credentials from '../src/providers/credentials.js'
import { seedSessions } from './seed.js'
import { QUICK, rounds, sqliteUnavailable } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const SESSIONS = QUICK ? 1_000 : 5_000
const READS = QUICK ? 200 : 1_000
const ROUNDS = rounds(7)
const WARMUP = 500
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const COOKIE = 'authjs.session-token'
const MAX_AGE = 30 * 24 * 60 * 60
// As in the tests (test/support/databases.ts): PG_URL overrides the server; the database is the bench's own.
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pgDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).href

interface Row {
  name: string
  /** µs per read, one per round. */
  roundsUs: number[]
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
  const tokens = Array.from({ length: SESSIONS }, () => randomBytes(32).toString('hex'))
  // Sessions created "now": not due for an update for a day (the default updateAge).
  const expires = new Date(Date.now() + MAX_AGE * 1000)
  await seedSessions(db, KnexAdapter, SESSIONS, expires, (i) => ({
    user: { name: `Ada Lovelace ${i}`, email: `ada.${i}@analytical-engine.example.com`, image: `https://avatars.example.com/u/${i}`, emailVerified: null },
    sessionToken: tokens[i]!,
  }))
  return tokens
}

/** `count` reads of sessions `offset` … on, in µs per read. */
async function measure(tokens: string[], run: (token: string, i: number) => Promise<unknown>, offset: number, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = offset; i < offset + count; i++) await run(tokens[i % tokens.length]!, i)
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
  // Fresh request objects for the reads about to be timed, made before timing: auth() remembers the
  // session per request. Only those: thousands more would leave garbage to collect in the timed pass.
  let requests = new Map<number, IncomingMessage>()
  const prepare = (run: unknown, offset: number, count: number) => {
    requests = new Map()
    if (run !== viaAuth) return
    for (let i = offset; i < offset + count; i++) requests.set(i, requestWithCookie(tokens[i % tokens.length]!))
  }
  const viaAuth = async (_token: string, i: number) => {
    const session = await auth(requests.get(i)!, response)
    if (!session) throw new Error('auth() found no session')
    return session
  }

  const candidates = [
    { name: `${label}: raw knex join`, run: raw, queries: 0 },
    { name: `${label}: portcullis auth(req, res)`, run: viaAuth, queries: 0 },
  ]
  const roundsUs = candidates.map(() => [] as number[])
  for (const { run } of candidates) {
    prepare(run, 0, WARMUP)
    await measure(tokens, run, 0, WARMUP)
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < candidates.length; i++) {
      const c = (i + round) % candidates.length
      const candidate = candidates[c]!
      prepare(candidate.run, round * READS, READS)
      queries = 0
      roundsUs[c]!.push(await measure(tokens, candidate.run, round * READS, READS))
      candidate.queries += queries
    }
  }
  return candidates.map(({ name, queries: total }, c) => ({ name, roundsUs: roundsUs[c]!, queriesPerOp: total / (ROUNDS * READS) }))
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

const results: Row[][] = []
const noSqlite = sqliteUnavailable()
if (noSqlite) console.log(`SQLite rows skipped: ${noSqlite}.`)
else {
  const sqlite = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  results.push(await benchDatabase('SQLite', sqlite))
  await sqlite.destroy()
}

const pg = await postgres()
if (pg) {
  results.push(await benchDatabase('PostgreSQL', pg))
  await pg.destroy()
}

const us = (value: number) => value.toFixed(1)
console.log(
  `\nNode ${process.version}, ${thousands(SESSIONS)} distinct database sessions, none due for an update, sequential, ${ROUNDS} rounds of ${thousands(READS)} reads per row taking turns, medians (load average ${loadavg()[0]!.toFixed(1)})\n`,
)
printTable(
  ['database session read', 'µs/op', 'spread µs/op', 'ops/s', 'queries/op', 'x raw'],
  results.flatMap((rows) => {
    // Each database is a group of its own: x raw is over that database's raw query.
    const rawUs = median(rows[0]!.roundsUs)
    return rows.map(({ name, roundsUs, queriesPerOp }) => {
      const medianUs = median(roundsUs)
      return [name, us(medianUs), spread(roundsUs, us), thousands(1e6 / medianUs), queriesPerOp.toFixed(2), (medianUs / rawUs).toFixed(2)]
    })
  }),
)
const ratios = results.map((rows) => `${rows[0]!.name.split(':')[0]} ${(median(rows[1]!.roundsUs) / median(rows[0]!.roundsUs)).toFixed(2)}x`)
console.log(`\nauth(req, res) over the raw query: ${ratios.join(', ')} (targets: SQLite <= 1.2x, PostgreSQL <= 1.1x, one query per request)`)

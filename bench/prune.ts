/**
 * Pruning benchmark (`npm run bench:prune`; too long for `npm run bench`): PostgreSQL only, on a
 * database of its own (skipped with a line when the server is not reachable).
 *
 * 1. 1,000,000 expired and 100,000 valid sessions (100,000 users, as many accounts and verification
 *    tokens): the database session read (`getSessionAndUser`) before the prune, then `prune()` while
 *    one client reads valid sessions in a loop: the time to prune, its statements and the longest,
 *    the reads during the prune against before it.
 * 2. The session read with 1,000,000 rows in the session table against 1,000 (the indexes at work).
 * 3. EXPLAIN of every query the adapter makes (each method once, its SQL captured), with the
 *    tables full (the 1,000,000 sessions of 2): the scans each one uses. A `Seq Scan` is flagged.
 *
 * Reads are sequential, of distinct random valid tokens. Medians and p99 in µs. BENCH_QUICK=1 seeds a
 * tenth (checks that the bench runs, not figures to quote).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource, pruneRateLimits } from '../src/adapters/knex/index.js'
import { ensureTable } from '../src/security/rate-limit-stores.js'
import { QUICK } from './settings.js'
import { printTable, thousands } from './table.js'

const EXPIRED = QUICK ? 100_000 : 1_000_000
const VALID = QUICK ? 10_000 : 100_000
const USERS = QUICK ? 10_000 : 100_000
const READS = QUICK ? 500 : 3_000
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pgDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).href
const HOUR = 3600_000

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}
const us = (value: number) => value.toFixed(0)
const ms = (value: number) => value.toFixed(1)

/** Users, accounts and verification tokens by the hundred thousand, and sessions expiring at `expiresSql`. */
async function seedSessions(db: Knex, from: number, count: number, expiresSql: string): Promise<void> {
  // One statement per 100,000 rows: generate_series writes them inside PostgreSQL.
  for (let start = from; start < from + count; start += 100_000) {
    const end = Math.min(from + count, start + 100_000) - 1
    await db.raw(
      `insert into "Session" (id, "sessionToken", "userId", expires)
       select 's-' || g, md5('t' || g) || md5('u' || g), 'user-' || (g % ${USERS}), ${expiresSql}
       from generate_series(${start}, ${end}) g`,
    )
  }
}

async function seedRest(db: Knex): Promise<void> {
  await db.raw(`insert into "User" (id, name, email, image) select 'user-' || g, 'Ada ' || g, 'ada.' || g || '@example.com', null from generate_series(0, ${USERS - 1}) g`)
  await db.raw(
    `insert into "Account" (id, "userId", type, provider, "providerAccountId", access_token) select 'a-' || g, 'user-' || g, 'oidc', 'example', 'sub-' || g, md5('a' || g) from generate_series(0, ${USERS - 1}) g`,
  )
  // Half of them expired (never-followed links), half live.
  await db.raw(
    `insert into "VerificationToken" (identifier, token, expires) select 'ada.' || g || '@example.com', md5('v' || g), now() + (case when g % 2 = 0 then interval '-1 hour' else interval '1 hour' end) from generate_series(0, ${USERS - 1}) g`,
  )
  await db.raw(
    `insert into "Authenticator" ("credentialID", "userId", "providerAccountId", "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp") select 'cred-' || g, 'user-' || g, 'cred-' || g, md5('k' || g), 0, 'multiDevice', true from generate_series(0, ${USERS - 1}) g`,
  )
  await ensureTable(db, 'portcullis_rate_limit')
  await db.raw(`insert into portcullis_rate_limit (key, points, expire) select 'k-' || g, 1, (extract(epoch from now()) * 1000)::bigint + (case when g % 2 = 0 then -3600000 else 3600000 end) from generate_series(0, ${USERS - 1}) g`)
}

/** `count` reads of random tokens among `tokens`, then more while `keepGoing()`, each timed, in µs. */
async function reads(adapter: ReturnType<typeof KnexAdapter>, tokens: readonly string[], count: number, keepGoing: () => boolean = () => false): Promise<number[]> {
  const times: number[] = []
  while (times.length < count || keepGoing()) {
    const token = tokens[Math.floor(Math.random() * tokens.length)]!
    const start = process.hrtime.bigint()
    const found = await adapter.getSessionAndUser(token)
    times.push(Number(process.hrtime.bigint() - start) / 1000)
    if (!found) throw new Error('a valid session was not found')
  }
  return times
}

async function validTokens(db: Knex, limit = 20_000): Promise<string[]> {
  const rows = (await db('Session').select('sessionToken').where('expires', '>', new Date()).orderByRaw('random()').limit(limit)) as { sessionToken: string }[]
  return rows.map((row) => row.sessionToken)
}

/** Times each statement of `db` while `work` runs: the count and the longest, in ms. */
async function timeStatements<T>(db: Knex, work: () => Promise<T>): Promise<{ result: T; statements: number; longestMs: number; totalMs: number }> {
  const started = new Map<string, bigint>()
  let statements = 0
  let longest = 0
  const onQuery = (query: { __knexQueryUid: string; sql: string }) => {
    if (/^delete/i.test(query.sql)) started.set(query.__knexQueryUid, process.hrtime.bigint())
  }
  const onResponse = (_: unknown, query: { __knexQueryUid: string }) => {
    const start = started.get(query.__knexQueryUid)
    if (start === undefined) return
    statements++
    longest = Math.max(longest, Number(process.hrtime.bigint() - start) / 1e6)
  }
  db.on('query', onQuery).on('query-response', onResponse)
  const start = process.hrtime.bigint()
  try {
    const result = await work()
    return { result, statements, longestMs: longest, totalMs: Number(process.hrtime.bigint() - start) / 1e6 }
  } finally {
    db.removeListener('query', onQuery).removeListener('query-response', onResponse)
  }
}

/** Runs every adapter method once and returns the SQL and bindings of each statement it sent. */
async function adapterQueries(db: Knex): Promise<{ method: string; sql: string; bindings: unknown[] }[]> {
  const adapter = KnexAdapter(db)
  const captured: { method: string; sql: string; bindings: unknown[] }[] = []
  let method = ''
  // Only the adapter's own statements: none while `method` is unset (the bench's helper queries).
  const onQuery = (query: { sql: string; bindings: unknown[] }) => {
    if (method) captured.push({ method, sql: query.sql, bindings: query.bindings ?? [] })
  }
  db.on('query', onQuery)
  const run = async (name: string, call: () => Promise<unknown>) => {
    method = name
    await call()
  }
  try {
    const id = `user-${Math.floor(USERS / 2)}`
    const email = `ada.${Math.floor(USERS / 2)}@example.com`
    const token = (await validTokens(db, 1))[0]!
    await run('getUser', () => adapter.getUser(id))
    await run('getUserByEmail', () => adapter.getUserByEmail(email.toUpperCase()))
    await run('getUserByAccount', () => adapter.getUserByAccount({ provider: 'example', providerAccountId: `sub-${Math.floor(USERS / 2)}` }))
    await run('getAccount', () => adapter.getAccount(`sub-${Math.floor(USERS / 2)}`, 'example'))
    await run('getAccountsByUserId', () => adapter.getAccountsByUserId(id))
    await run('updateAccount', () => adapter.updateAccount({ provider: 'example', providerAccountId: `sub-${Math.floor(USERS / 2)}`, access_token: 'x' }, { expect: { access_token: 'y' } }))
    await run('updateUser', () => adapter.updateUser({ id, name: 'Ada' }))
    await run('getSessionAndUser', () => adapter.getSessionAndUser(token))
    await run('updateSession', () => adapter.updateSession({ sessionToken: token, expires: new Date(Date.now() + HOUR) }))
    await run('useVerificationToken', () => adapter.useVerificationToken({ identifier: email, token: 'nope' }))
    const user = await adapter.createUser({ email: `${randomUUID()}@example.com` })
    await run('createSession', () => adapter.createSession({ sessionToken: randomBytes(32).toString('hex'), userId: user.id, expires: new Date(Date.now() + HOUR) }))
    await run('deleteSession', () => adapter.deleteSession(randomBytes(32).toString('hex')))
    await run('linkAccount', () => adapter.linkAccount({ userId: user.id, type: 'oidc', provider: 'example', providerAccountId: randomUUID() }))
    await run('unlinkAccount', () => adapter.unlinkAccount({ provider: 'example', providerAccountId: 'missing' }))
    await run('createAuthenticator', () =>
      adapter.createAuthenticator({ credentialID: 'cred-new', userId: user.id, providerAccountId: 'cred-1', credentialPublicKey: 'k', counter: 0, credentialDeviceType: 'singleDevice', credentialBackedUp: false }),
    )
    await run('getAuthenticator', () => adapter.getAuthenticator('cred-new'))
    await run('listAuthenticatorsByUserId', () => adapter.listAuthenticatorsByUserId(user.id))
    await run('updateAuthenticatorCounter', () => adapter.updateAuthenticatorCounter('cred-new', 1))
    await run('deleteUser', () => adapter.deleteUser(user.id))
    // No session has expired by then (step 1 pruned them): one statement per table, explained as it runs.
    await run('prune', () => adapter.prune({ batchSize: 100, now: new Date(Date.now() - HOUR - 995 * 60_000) }))
    await run('pruneRateLimits', () => pruneRateLimits(db))
  } finally {
    db.removeListener('query', onQuery)
  }
  return captured
}

/** The scans of a plan: the node names that read a table. */
async function explain(db: Knex, sql: string, bindings: unknown[]): Promise<string> {
  if (/^(insert|select pg_|select get_lock|begin|commit|rollback|select \* from information_schema|select to_regclass)/i.test(sql.trim())) return ''
  const connection = await db.client.acquireConnection()
  try {
    const result = (await (connection as { query(sql: string, values: unknown[]): Promise<{ rows: Record<string, string>[] }> }).query(`explain ${sql}`, bindings)) as { rows: { 'QUERY PLAN': string }[] }
    const scans = result.rows.map((row) => row['QUERY PLAN']).filter((line) => /Scan/.test(line)).map((line) => line.trim().replace(/^->\s*/, '').replace(/\s+\(cost.*$/, ''))
    return scans.join('; ') || result.rows[0]!['QUERY PLAN'].trim().replace(/\s+\(cost.*$/, '')
  } finally {
    await db.client.releaseConnection(connection)
  }
}

async function main(): Promise<void> {
  const name = `portcullis_bench_prune_${randomBytes(4).toString('hex')}`
  const admin = knex({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } })
  try {
    await admin.raw('select 1')
  } catch (error) {
    console.log(`PostgreSQL not reachable at ${PG_URL} (${(error as Error).message}): skipping the prune bench.`)
    await admin.destroy()
    return
  }
  await admin.raw(`create database ${name}`)
  const db = knex({ client: 'pg', connection: pgDatabase(name) })
  try {
    await db.migrate.latest({ migrationSource: migrationSource() })
    const seedStart = Date.now()
    await seedRest(db)
    await seedSessions(db, 0, EXPIRED, `now() - interval '1 hour' - (g % 1000) * interval '1 minute'`)
    await seedSessions(db, EXPIRED, VALID, `now() + interval '30 days'`)
    await db.raw('analyze')
    console.log(`Seeded ${thousands(EXPIRED)} expired + ${thousands(VALID)} valid sessions, ${thousands(USERS)} users in ${((Date.now() - seedStart) / 1000).toFixed(1)} s.\n`)

    // 1. Read before, prune under reads.
    const adapter = KnexAdapter(db)
    const tokens = await validTokens(db)
    await reads(adapter, tokens, 500) // warm-up
    const before = await reads(adapter, tokens, READS)
    let pruning = true
    const during = reads(adapter, tokens, 0, () => pruning)
    const timed = await timeStatements(db, () => adapter.prune())
    pruning = false
    const duringTimes = await during
    const after = await reads(adapter, tokens, READS)

    console.log(`## Prune: ${thousands(EXPIRED)} expired + ${thousands(VALID)} valid sessions (PostgreSQL)\n`)
    printTable(
      ['prune()', 'deleted', 'statements', 'total s', 'longest statement ms'],
      [['sessions + verification tokens, batches of 5,000', `${thousands(timed.result!.sessions)} + ${thousands(timed.result!.verificationTokens)}`, String(timed.statements), (timed.totalMs / 1000).toFixed(1), ms(timed.longestMs)]],
    )
    console.log()
    printTable(
      ['getSessionAndUser', 'reads', 'median µs', 'p99 µs', 'max µs'],
      [
        ['before the prune', thousands(before.length), us(percentile(before, 50)), us(percentile(before, 99)), us(Math.max(...before))],
        ['during the prune', thousands(duringTimes.length), us(percentile(duringTimes, 50)), us(percentile(duringTimes, 99)), us(Math.max(...duringTimes))],
        ['after the prune', thousands(after.length), us(percentile(after, 50)), us(percentile(after, 99)), us(Math.max(...after))],
      ],
    )

    // 2. 1,000,000 rows against 1,000.
    const fill = 1_000_000 - (await db('Session').count({ n: '*' }).first().then((row) => Number(row?.n)))
    await seedSessions(db, 10 * EXPIRED, Math.max(0, QUICK ? 0 : fill), `now() + interval '30 days'`)
    await db.raw('analyze "Session"')
    const large = Number((await db('Session').count({ n: '*' }).first())?.n)
    const largeTokens = await validTokens(db)
    await reads(adapter, largeTokens, 500)
    const largeTimes = await reads(adapter, largeTokens, READS)

    // 3. With every table full (1,000,000 sessions): each query of the adapter once, explained.
    const plans: string[][] = []
    const seen = new Set<string>()
    for (const query of await adapterQueries(db)) {
      if (seen.has(query.sql)) continue
      seen.add(query.sql)
      const plan = await explain(db, query.sql, query.bindings)
      if (plan) plans.push([query.method, query.sql.length > 90 ? `${query.sql.slice(0, 87)}...` : query.sql, plan + (/Seq Scan/.test(plan) ? '  ⚠' : '')])
    }

    await db('Session').whereNotIn('sessionToken', largeTokens.slice(0, 1000)).del()
    await db.raw('vacuum analyze "Session"')
    const small = Number((await db('Session').count({ n: '*' }).first())?.n)
    const smallTokens = largeTokens.slice(0, 1000)
    await reads(adapter, smallTokens, 500)
    const smallTimes = await reads(adapter, smallTokens, READS)
    console.log(`\n## Session read by table size (PostgreSQL)\n`)
    printTable(
      ['sessions in the table', 'reads', 'median µs', 'p99 µs'],
      [
        [thousands(large), thousands(largeTimes.length), us(percentile(largeTimes, 50)), us(percentile(largeTimes, 99))],
        [thousands(small), thousands(smallTimes.length), us(percentile(smallTimes, 50)), us(percentile(smallTimes, 99))],
      ],
    )

    console.log(`\n## EXPLAIN of every adapter query (${thousands(USERS)} users, accounts and authenticators, ${thousands(large)} sessions)\n`)
    printTable(['method', 'statement', 'scans'], plans)
  } finally {
    await db.destroy()
    await admin.raw(`drop database if exists ${name} with (force)`)
    await admin.destroy()
  }
}

await main()

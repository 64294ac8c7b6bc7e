/**
 * API key benchmark (`npm run bench -- api-keys`): `auth(req)` with an API key in the Authorization
 * header against the raw Knex query that finds the same key and its owning user (one indexed lookup, one
 * join: the columns and checks a correct read of a user's key needs, not the organization's left join
 * the adapter adds for organization-owned keys; bench/README.md), with the opened-key cache off and on, at 1,000 keys in the table and at 1,000,000 (SQLite,
 * better-sqlite3, in memory), and at 1,000 on PostgreSQL over loopback (PG_URL; skipped with a line when
 * unreachable). In process and sequential, as the database-session group: what the library adds to
 * the lookup, not the HTTP stack's cost.
 *
 * Method: per table size, 1,000 users owning the keys round-robin; 1,000 real keys are read (the
 * other rows are keys of random hashes). 500 untimed reads per row, then 7 rounds (BENCH_ROUNDS) of
 * 2,000 reads, the rows taking turns. The limiter is off (`rateLimit: false` on the keys), so the
 * rows measure the read; a row with the default per-key limit (memory store) shows what it adds.
 * BENCH_QUICK=1: 1,000 and 100,000 keys, 3 rounds of 500.
 *
 * Targets (issue 60): the read without the cache at most 1.1x the raw query; with it, within the
 * JWT session read's ratio; no slower at 1,000,000 keys than at 1,000 beyond the index's depth.
 */
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { createHash, randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import knex, { type Knex } from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Credentials from '../src/providers/credentials.js'
import { displayOf, generateKey } from '../src/features/api-keys/format.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const SIZES = QUICK ? [1_000, 100_000] : [1_000, 1_000_000]
const PG_SIZE = 1_000
const READ_KEYS = 1_000
const READS = QUICK ? 500 : 2_000
const ROUNDS = rounds(7)
const WARMUP = 500
const USERS = 1_000
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'

interface Row {
  name: string
  roundsUs: number[]
  queriesPerOp: number
}

function requestWithKey(key: string): IncomingMessage {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.url = '/reports'
  req.headers = { host: 'localhost:3000', authorization: `Bearer ${key}`, accept: 'application/json' }
  return req
}

async function seed(db: Knex, size: number): Promise<string[]> {
  await db.migrate.latest({ migrationSource: migrationSource() })
  const userIds = Array.from({ length: USERS }, () => randomUUID())
  for (let i = 0; i < USERS; i += 500) {
    await db('User').insert(userIds.slice(i, i + 500).map((id, j) => ({ id, name: `User ${i + j}`, email: `u${i + j}@example.com` })))
  }
  const keys = Array.from({ length: READ_KEYS }, () => generateKey('pc_live_'))
  const createdAt = new Date()
  const row = (i: number) => {
    const key = i < READ_KEYS ? keys[i]! : undefined
    return {
      id: randomUUID(),
      keyHash: key ? createHash('sha256').update(key).digest('hex') : createHash('sha256').update(`filler ${i}`).digest('hex'),
      display: key ? displayOf(key, 'pc_live_') : 'pc_live_xxxx…xxxx',
      name: `key ${i}`,
      ownerType: 'user',
      ownerId: userIds[i % USERS]!,
      scopes: '["reports:read"]',
      createdAt,
      // The read rows measure the read: no per-key limit (the default limit's row sets none either way).
      rateLimitMax: null,
    }
  }
  await db.transaction(async (trx) => {
    for (let i = 0; i < size; i += 400) await trx('ApiKey').insert(Array.from({ length: Math.min(400, size - i) }, (_, j) => row(i + j)))
  })
  // PostgreSQL plans by the tables' statistics, which a live database's autovacuum keeps: without them, on
  // tables just filled, it took the floor's query through the ownerType index (693 rows filtered) instead of the hash's.
  if (db.client.dialect === 'postgresql') await db.raw('analyze')
  return keys
}

async function measure(run: (i: number) => Promise<unknown>, offset: number, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = offset; i < offset + count; i++) await run(i)
  return Number(process.hrtime.bigint() - start) / 1000 / count
}

async function benchSize(label: string, db: Knex, size: number): Promise<Row[]> {
  const seeding = Date.now()
  const keys = await seed(db, size)
  console.log(`${label}: ${thousands(size)} keys seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)
  let queries = 0
  db.on('query', () => queries++)
  const hashes = keys.map((key) => createHash('sha256').update(key).digest('hex'))

  // The indexed lookup and join a correct read of a user's key needs, written by hand as an app would (its
  // query built on each call): the key's row, the owner's columns auth(req) returns, the owner's ban, and
  // no key of a user marked deleted. Not the organization's left join the adapter adds (bench/README.md).
  const raw = async (i: number) => {
    const found = await db('ApiKey as k')
      .join('User as u', 'u.id', 'k.ownerId')
      .where('k.keyHash', hashes[i % READ_KEYS]!)
      .andWhere('k.ownerType', 'user')
      .whereNull('u.deletedAt')
      .first('k.*', 'u.id as uid', 'u.name as uname', 'u.email as uemail', 'u.image as uimage', 'u.bannedAt as ubannedAt', 'u.banExpiresAt as ubanExpiresAt')
    if (!found) throw new Error('raw query found no key')
  }
  const instance = (apiKeys: object) => Portcullis({ secret: SECRET, adapter: KnexAdapter(db), providers: [Credentials({ authorize: () => null })], rateLimit: false, apiKeys: { ...apiKeys }, logger: { warn: () => {}, error: console.error, debug: () => {} } })
  const uncached = instance({ cacheSeconds: 0, rateLimit: false })
  const cached = instance({ cacheSeconds: 3600, cacheSize: READ_KEYS, rateLimit: false })
  const limited = instance({ cacheSeconds: 3600, cacheSize: READ_KEYS })
  const response = new ServerResponse(requestWithKey(''))
  let requests = new Map<number, IncomingMessage>()
  const viaAuth = (auth: typeof uncached.auth) => async (i: number) => {
    const session = await auth(requests.get(i)!, response)
    if (!session) throw new Error('auth() found no key')
  }
  const candidates = [
    { name: `${label}, ${thousands(size)} keys: raw knex lookup + join`, run: raw, queries: 0 },
    { name: `${label}, ${thousands(size)} keys: auth(req), no cache`, run: viaAuth(uncached.auth), queries: 0 },
    { name: `${label}, ${thousands(size)} keys: auth(req), opened-key cache`, run: viaAuth(cached.auth), queries: 0 },
    { name: `${label}, ${thousands(size)} keys: auth(req), cache + default rate limit (memory)`, run: viaAuth(limited.auth), queries: 0 },
  ]
  const prepare = (offset: number, count: number) => {
    requests = new Map()
    for (let i = offset; i < offset + count; i++) requests.set(i, requestWithKey(keys[i % READ_KEYS]!))
  }
  for (const { run } of candidates) {
    prepare(0, READ_KEYS)
    // Warm-up, and (for the cached rows) every read key opened once, so the timed rounds hit the cache.
    await measure(run, 0, Math.max(WARMUP, READ_KEYS))
  }
  const roundsUs = candidates.map(() => [] as number[])
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < candidates.length; i++) {
      const c = (i + round) % candidates.length
      const candidate = candidates[c]!
      prepare(round * READS, READS)
      queries = 0
      roundsUs[c]!.push(await measure(candidate.run, round * READS, READS))
      candidate.queries += queries
    }
  }
  return candidates.map(({ name, queries: total }, c) => ({ name, roundsUs: roundsUs[c]!, queriesPerOp: total / (ROUNDS * READS) }))
}

// As in the tests (test/support/databases.ts): PG_URL overrides the server; the database is the bench's own.
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pgDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).href

/** A fresh database of the bench's on PostgreSQL, or undefined (with a line) when it is not reachable. */
async function postgres(): Promise<Knex | undefined> {
  const admin = knex({ client: 'pg', connection: pgDatabase('postgres'), pool: { min: 0, max: 1 }, acquireConnectionTimeout: 2000 })
  try {
    await admin.raw('drop database if exists portcullis_bench_keys')
    await admin.raw('create database portcullis_bench_keys')
  } catch (error) {
    console.log(`PostgreSQL not reachable at ${new URL(PG_URL).host} (${(error as Error).message}): its rows are skipped.`)
    return undefined
  } finally {
    await admin.destroy()
  }
  return knex({ client: 'pg', connection: pgDatabase('portcullis_bench_keys') })
}

const results: Row[][] = []
const ratioLabels: string[] = []
for (const size of SIZES) {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  results.push(await benchSize('SQLite', db, size))
  ratioLabels.push(`SQLite ${thousands(size)} keys`)
  await db.destroy()
}
// PostgreSQL on loopback, where the query is a round trip: 1,000 keys (the table's size shows in the SQLite rows).
const pg = await postgres()
if (pg) {
  results.push(await benchSize('PostgreSQL', pg, PG_SIZE))
  ratioLabels.push(`PostgreSQL ${thousands(PG_SIZE)} keys`)
  await pg.destroy()
}

const us = (value: number) => value.toFixed(1)
console.log(`\nNode ${process.version}, SQLite in memory and PostgreSQL on loopback, ${thousands(READ_KEYS)} distinct keys read, sequential, ${ROUNDS} rounds of ${thousands(READS)} reads per row taking turns, medians (load average ${loadavg()[0]!.toFixed(1)})\n`)
printTable(
  ['API key read', 'µs/op', 'spread µs/op', 'ops/s', 'queries/op', 'x raw'],
  results.flatMap((rows) => {
    const rawUs = median(rows[0]!.roundsUs)
    return rows.map(({ name, roundsUs, queriesPerOp }) => {
      const medianUs = median(roundsUs)
      return [name, us(medianUs), spread(roundsUs, us), thousands(1e6 / medianUs), queriesPerOp.toFixed(2), (medianUs / rawUs).toFixed(2)]
    })
  }),
)
const ratio = (rows: Row[], i: number) => (median(rows[i]!.roundsUs) / median(rows[0]!.roundsUs)).toFixed(2)
console.log(`\nauth(req) over the raw lookup, no cache: ${results.map((rows, s) => `${ratioLabels[s]} ${ratio(rows, 1)}x`).join(', ')} (target <= 1.1x); with the cache: ${results.map((rows, s) => `${ratioLabels[s]} ${ratio(rows, 2)}x`).join(', ')}`)

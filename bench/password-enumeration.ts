/**
 * Do the password provider's answers take as long for an address with an account as for one
 * without? (`npm run bench:enumeration`; not in `npm run bench`: it measures a security property,
 * not speed.) Over HTTP on loopback, the Password provider with its default hashing (Argon2id on Node ≥ 24.7, else scrypt) on
 * SQLite, mails to a no-op `sendMail` (they go out after the answer anyway). Pairs, the two sides
 * taking turns and the first alternating: sign-in with a wrong password for a user / for an unknown
 * address, and for a user imported with a bcrypt hash (cost 10: several times cheaper than the
 * default scrypt, about 2.5 times dearer than the default Argon2id) / for an unknown address; sign-up of a taken / a free address; reset request for a known / an unknown address.
 * Prints each side's median and spread (ms) and the difference of the medians. BENCH_QUICK=1: 5
 * pairs a row instead of 15.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import express from 'express'
import bcrypt from 'bcryptjs'
import knex from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Password from '../src/providers/password.js'
import { defaultHashing } from '../src/features/password/hash.js'
import { QUICK } from './settings.js'
import { median, printTable, spread } from './table.js'

const PAIRS = QUICK ? 5 : 15
const PASSWORD = 'correct horse battery staple'

const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
await db.migrate.latest({ migrationSource: migrationSource() })
const { handlers } = Portcullis({
  secret: 'enumeration-bench-secret-0123456789abcdef',
  adapter: KnexAdapter(db),
  logger: { error: () => {}, warn: () => {}, debug: () => {} },
  rateLimit: false,
  providers: [Password({ sendMail: async () => {} })],
})
const app = express()
app.use('/api/auth', handlers)
const server = createServer(app)
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

/** One POST of a form with a fresh CSRF token; resolves with the milliseconds of the POST alone. */
async function timedPost(path: string, fields: Record<string, string>): Promise<number> {
  const csrf = await fetch(`${base}/api/auth/csrf`)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const cookie = csrf.headers.getSetCookie().map((each) => each.split(';')[0]).join('; ')
  const body = new URLSearchParams({ csrfToken, ...fields })
  const started = performance.now()
  const response = await fetch(`${base}/api/auth/${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' }, body })
  await response.arrayBuffer()
  const elapsed = performance.now() - started
  if (response.status !== 302) throw new Error(`POST /${path} answered ${response.status}`)
  return elapsed
}

// The account, made through the routes; the first sign-in with an unknown address makes the dummy hash.
await timedPost('signup', { email: 'member@example.com', password: PASSWORD })
await timedPost('callback/password', { email: 'warm-up@example.com', password: 'wrong password here' })
// A user moved over from a Passport app, as docs/passwords.md describes (a wrong password leaves the hash as it is).
const adapter = KnexAdapter(db)
const imported = await adapter.createUser({ email: 'imported@example.com', emailVerified: new Date() })
await adapter.setUserPassword(imported.id, bcrypt.hashSync(PASSWORD, 10))

let counter = 0
const rows: [string, () => Promise<number>, () => Promise<number>][] = [
  ['sign-in, wrong password: user / unknown address', () => timedPost('callback/password', { email: 'member@example.com', password: 'wrong password here' }), () => timedPost('callback/password', { email: `nobody${++counter}@example.com`, password: 'wrong password here' })],
  ['sign-in, wrong password: imported bcrypt user / unknown address', () => timedPost('callback/password', { email: 'imported@example.com', password: 'wrong password here' }), () => timedPost('callback/password', { email: `nobody${++counter}@example.com`, password: 'wrong password here' })],
  ['sign-up: taken / free address', () => timedPost('signup', { email: 'member@example.com', password: PASSWORD }), () => timedPost('signup', { email: `new${++counter}@example.com`, password: PASSWORD })],
  ['reset request: known / unknown address', () => timedPost('forgot-password', { email: 'member@example.com' }), () => timedPost('forgot-password', { email: `nobody${++counter}@example.com` })],
]

const table: string[][] = []
for (const [name, known, unknown] of rows) {
  const a: number[] = []
  const b: number[] = []
  for (let pair = 0; pair < PAIRS; pair++) {
    if (pair % 2 === 0) {
      a.push(await known())
      b.push(await unknown())
    } else {
      b.push(await unknown())
      a.push(await known())
    }
  }
  const format = (ms: number) => ms.toFixed(1)
  table.push([name, String(PAIRS), format(median(a)), spread(a, format), format(median(b)), spread(b, format), format(median(a) - median(b))])
}
server.close()
await db.destroy()

console.log(`\nNode ${process.version}, Password provider, default hashing ${defaultHashing().algorithm}, SQLite in memory, HTTP on loopback, ${PAIRS} pairs a row taking turns, ms (load average ${loadavg()[0]!.toFixed(1)})\n`)
printTable(['answer: with an account / without', 'pairs', 'with', 'spread', 'without', 'spread', 'difference'], table)

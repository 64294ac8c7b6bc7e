/**
 * Session-read benchmark (`npm run bench`): the cost of reading one session, in one process, on
 * the same 10,000 distinct session cookies, sequentially.
 *
 *   floor            the bare RFC 7518 §5.2.2.2 work inline (HMAC-SHA-512, compare, AES-256-CBC, JSON.parse),
 *                    everything per key made once (bench/floor.ts)
 *   openSessionToken portcullis's codec alone (strict parsing, header and claim checks)
 *   auth(req, res)   the whole public read: cookie parsing, codec, session object, req.auth, on
 *                    cookies this instance never saw (cache off: every cookie is decrypted)
 *   …, warm          the same, on cookies the instance read moments ago (jwt.cacheSize): what a
 *                    browser's second and later requests cost until the cookie is re-issued
 *   …, warm, store   the same with `session.store` (revocable sessions: a Knex table on in-memory
 *                    SQLite holding the 10,000 sessions): each session asked about once, then the
 *                    store's changes read once per `revocationCacheSeconds` (5) for all of them:
 *                    target ≤ 1.1× the warm row (issue 20). Every row reads the same cookies (each
 *                    carries a session id)
 *   …, warm, roles   the warm read with the `roles` option on, on the same cookies each with a
 *                    `roles` claim (`["editor"]`, 17 bytes more): what carrying the roles costs a
 *                    read (`session.user.roles`); within the warm row's ratio (issue 66)
 *   jose             jwtDecrypt with the key derived once (WebCrypto, async)
 *   @auth/core/jwt   decode (derives the key on every call, then jose)
 *   getSession       @auth/express getSession (builds a Request and runs Auth.js's /session route)
 *   better-auth      its getSession, reading the database (in-memory SQLite, its own tables), and with
 *                    its cookie cache (the signed session_data cookie, never stale here): bench/better-auth.ts
 *
 * Method: the rows take turns within each of 5 rounds (BENCH_ROUNDS), the first row rotating, so a
 * slow spell of the machine is spread over all of them; 1,000 untimed reads each first (slow rows 100).
 * A round of a fast row reads all 10,000 cookies once; the three slow libraries read 150 per round
 * (the next 150 each time). A row reports the median µs/op of its rounds, their spread (min–max),
 * and the median over the first row's (the floor). BENCH_QUICK=1: 2,000 and 100 reads, 3 rounds.
 *
 * Targets (issue 2): auth() at most 3x the floor, and at least 30x faster than getSession.
 */
import { hkdfSync, randomBytes, randomUUID } from 'node:crypto'
import { jwtDecrypt } from 'jose'
import { decode as authjsDecode } from '@auth/core/jwt'
import CredentialsAuthjs from '@auth/core/providers/credentials'
import { getSession } from '@auth/express'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { loadavg } from 'node:os'
import knex from 'knex'
import Portcullis, { defineAccess } from '../src/index.js'
import Credentials from '../src/providers/credentials.js'
import { deriveKeyRing } from '../src/session/keys.js'
import { ensureStoreTable } from '../src/session/store/knex.js'
import { openSessionToken, sealSessionToken } from '../src/session/token.js'
import { betterAuthSessions } from './better-auth.js'
import { floorDecryptFor } from './floor.js'
import { QUICK, rounds, sqliteUnavailable } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const TOKENS = 10_000
/** Reads per round: a fast row reads every cookie once, a slow library (hundreds of µs each) fewer. */
const FAST_OPS = QUICK ? 2_000 : TOKENS
const SLOW_OPS = QUICK ? 100 : 150
const ROUNDS = rounds(5)
const WARMUP = 1_000
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const SALT = 'authjs.session-token'
const MAX_AGE = 30 * 24 * 60 * 60

const now = Math.floor(Date.now() / 1000)
const ring = deriveKeyRing([SECRET], SALT)
// jose's key: the content encryption key itself, derived once.
const cek = new Uint8Array(hkdfSync('sha256', SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 64))

// Each token carries a session id (`sid`), as tokens sealed with a session store do; without a
// store it is one more claim. So the row with a store reads exactly the same cookies as the others.
const tokens: string[] = []
// The same payloads with a `roles` claim, for the roles row: token → its twin.
const rolesTokens = new Map<string, string>()
const storeRows: Array<Record<string, unknown>> = []
for (let i = 0; i < TOKENS; i++) {
  const payload = {
    name: `Ada Lovelace ${i}`,
    email: `ada.lovelace.${i}@analytical-engine.example.com`,
    picture: `https://avatars.githubusercontent.com/u/${1_000_000 + i}?v=4`,
    sub: randomUUID(),
    sid: randomBytes(16).toString('base64url'),
  }
  tokens.push(sealSessionToken(payload, ring.current, MAX_AGE, now))
  rolesTokens.set(tokens[i]!, sealSessionToken({ ...payload, roles: ['editor'] }, ring.current, MAX_AGE, now))
  storeRows.push({ key: `s:${payload.sid}`, userId: payload.sub, createdAt: now * 1000, lastSeenAt: now * 1000, expires: (now + MAX_AGE) * 1000, ipAddress: '127.0.0.1', userAgent: 'bench' })
}

const floorDecrypt = floorDecryptFor(SECRET, SALT)

// The sessions recorded in a session store's table (in-memory SQLite), unless better-sqlite3 cannot
// load here (bench/settings.ts): then the store row is skipped with a line.
const noSqlite = sqliteUnavailable()
const STORE_ROW = 'portcullis auth(req, res), warm, store'
const storeDb = noSqlite ? undefined : knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
if (storeDb) {
  await ensureStoreTable(storeDb, 'portcullis_session_store')
  for (let i = 0; i < storeRows.length; i += 500) await storeDb('portcullis_session_store').insert(storeRows.slice(i, i + 500))
} else console.log(`${noSqlite}: the row "${STORE_ROW}" is skipped.`)

const { auth } = Portcullis({ secret: SECRET, providers: [Credentials({ authorize: () => null })], jwt: { cacheSize: 0 } })
const { auth: authWarm } = Portcullis({ secret: SECRET, providers: [Credentials({ authorize: () => null })], jwt: { cacheSize: TOKENS } })
const { auth: authStore } = Portcullis({
  secret: SECRET,
  providers: [Credentials({ authorize: () => null })],
  jwt: { cacheSize: TOKENS },
  ...(storeDb ? { session: { strategy: 'jwt' as const, store: { knex: storeDb } } } : {}),
})
const ROLES_ROW = 'portcullis auth(req, res), warm, roles'
const { auth: authRoles } = Portcullis({
  secret: SECRET,
  providers: [Credentials({ authorize: () => null })],
  jwt: { cacheSize: TOKENS },
  session: { strategy: 'jwt' },
  roles: defineAccess({ statements: { post: ['create', 'delete'] }, roles: { editor: { post: ['create'] } } }),
  // Read only at sign-in and by setRoles: a read takes the roles from the token.
  adapter: { getUserRoles: async () => null, setUserRoles: async () => true },
  logger: { warn: () => {} },
})
const authjsConfig = { secret: SECRET, trustHost: true, providers: [CredentialsAuthjs({ authorize: () => null })] }

// better-auth's sessions, one per token (its own cookies: token i → its session i), unless better-sqlite3 cannot load.
const BETTER_AUTH_ROW = 'better-auth getSession (SQLite)'
const BETTER_AUTH_CACHED_ROW = 'better-auth getSession, cookie cache'
const betterAuth = noSqlite ? undefined : await betterAuthSessions(SECRET, TOKENS)
if (!betterAuth) console.log(`${noSqlite}: the better-auth rows are skipped.`)
const tokenIndex = new Map(tokens.map((token, i) => [token, i]))

/** A real Node request carrying the session cookie, as Express hands it to a route. */
function requestWithCookie(token: string): IncomingMessage & { protocol: string } {
  const req = new IncomingMessage(new Socket()) as IncomingMessage & { protocol: string }
  req.method = 'GET'
  req.url = '/me'
  req.headers = { host: 'localhost:3000', cookie: `${SALT}=${token}`, accept: 'application/json' }
  req.protocol = 'http'
  return req
}

// Fresh request objects for every pass, made before it is timed: auth() remembers the session per
// request, so a reused request would measure a cache hit.
let authRequests = new Map<string, IncomingMessage>()
const prepareAuthRequests = () => {
  authRequests = new Map(tokens.map((token) => [token, requestWithCookie(token)]))
}
let rolesRequests = new Map<string, IncomingMessage>()
const prepareRolesRequests = () => {
  rolesRequests = new Map(tokens.map((token) => [token, requestWithCookie(rolesTokens.get(token)!)]))
}
let storeRequests = new Map<string, IncomingMessage>()
const prepareStoreRequests = () => {
  storeRequests = new Map(tokens.map((token) => [token, requestWithCookie(token)]))
}
const response = new ServerResponse(requestWithCookie(''))

interface Candidate {
  name: string
  /** Reads per round. */
  ops: number
  /** Once, before the warm-up. */
  setup?: () => Promise<void>
  /** Before every timed pass, untimed. */
  prepare?: () => void
  run: (token: string) => unknown
}

const allCandidates: Candidate[] = [
  { name: 'floor (inline node:crypto)', ops: FAST_OPS, run: floorDecrypt },
  {
    name: 'portcullis openSessionToken',
    ops: FAST_OPS,
    run: (token) => {
      const opened = openSessionToken(token, ring, now)
      if (opened === null) throw new Error('portcullis rejected a valid token')
      return opened.payload
    },
  },
  {
    name: 'portcullis auth(req, res)',
    ops: FAST_OPS,
    prepare: prepareAuthRequests,
    run: async (token) => {
      const session = await auth(authRequests.get(token)!, response)
      return { sub: session?.user.id }
    },
  },
  {
    name: 'portcullis auth(req, res), warm',
    ops: FAST_OPS,
    // Every cookie read twice, untimed (a token is cached from its second read): from then on the
    // measured reads hit the cache (10,000 tokens). Fresh requests each pass: auth() remembers per request.
    setup: async () => {
      for (let pass = 0; pass < 2; pass++) {
        prepareAuthRequests()
        for (const token of tokens) await authWarm(authRequests.get(token)!, response)
      }
    },
    prepare: prepareAuthRequests,
    run: async (token) => {
      const session = await authWarm(authRequests.get(token)!, response)
      return { sub: session?.user.id }
    },
  },
  {
    name: STORE_ROW,
    ops: FAST_OPS,
    setup: async () => {
      for (let pass = 0; pass < 2; pass++) {
        prepareStoreRequests()
        for (const token of tokens) await authStore(storeRequests.get(token)!, response)
      }
    },
    prepare: prepareStoreRequests,
    run: async (token) => {
      const session = await authStore(storeRequests.get(token)!, response)
      return { sub: session?.user.id }
    },
  },
  {
    name: ROLES_ROW,
    ops: FAST_OPS,
    setup: async () => {
      for (let pass = 0; pass < 2; pass++) {
        prepareRolesRequests()
        for (const token of tokens) await authRoles(rolesRequests.get(token)!, response)
      }
    },
    prepare: prepareRolesRequests,
    run: async (token) => {
      const session = await authRoles(rolesRequests.get(token)!, response)
      if (session?.user.roles?.[0] !== 'editor') throw new Error('the roles row read no roles')
      return { sub: session.user.id }
    },
  },
  {
    name: 'jose jwtDecrypt (key derived once)',
    ops: SLOW_OPS,
    run: async (token) =>
      (
        await jwtDecrypt(token, cek, {
          clockTolerance: 15,
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256CBC-HS512', 'A256GCM'],
        })
      ).payload,
  },
  { name: '@auth/core/jwt decode', ops: SLOW_OPS, run: (token) => authjsDecode({ token, secret: SECRET, salt: SALT }) },
  {
    name: '@auth/express getSession',
    ops: SLOW_OPS,
    run: async (token) => {
      const session = await getSession(requestWithCookie(token) as never, authjsConfig)
      return { sub: (session?.user as { email?: string } | undefined)?.email ?? session?.user?.name }
    },
  },
  { name: BETTER_AUTH_ROW, ops: SLOW_OPS, run: async (token) => ({ sub: await betterAuth!.read(tokenIndex.get(token)!) }) },
  {
    name: BETTER_AUTH_CACHED_ROW,
    ops: SLOW_OPS,
    // Each cookie's session_data made before the clock starts: the cache at its best, never stale.
    setup: async () => {
      for (let i = 0; i < Math.min(TOKENS, SLOW_OPS * ROUNDS + WARMUP); i++) await betterAuth!.readCached(i)
    },
    run: async (token) => ({ sub: await betterAuth!.readCached(tokenIndex.get(token)!) }),
  },
]
const candidates = allCandidates.filter((candidate) => !(storeDb === undefined && candidate.name === STORE_ROW) && !(betterAuth === undefined && candidate.name.startsWith('better-auth')))

/** `count` reads from token `offset` on, in µs per read. */
async function measure(run: (token: string) => unknown, offset: number, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    const result = run(tokens[(offset + i) % TOKENS]!)
    // Only await real promises: awaiting a plain value would add a microtask to the sync paths.
    if (result instanceof Promise) await result
  }
  return Number(process.hrtime.bigint() - start) / 1000 / count
}

for (const { name, ops, setup, prepare, run } of candidates) {
  await setup?.()
  prepare?.()
  // Every candidate must accept a token before it is timed.
  const sample = await run(tokens[0]!)
  if ((sample as { sub?: unknown }).sub === undefined) throw new Error(`${name}: no sub`)
  await measure(run, 0, Math.min(WARMUP, ops / 5))
}
const roundsUs = candidates.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < candidates.length; i++) {
    const c = (i + round) % candidates.length
    const { ops, prepare, run } = candidates[c]!
    prepare?.()
    roundsUs[c]!.push(await measure(run, (round * ops) % TOKENS, ops))
  }
}

const tokenBytes = tokens.reduce((sum, t) => sum + t.length, 0) / TOKENS
const medianUs = roundsUs.map((values) => median(values))
const floorUs = medianUs[0]!
const us = (value: number) => value.toFixed(2)
console.log(
  `\nNode ${process.version}, ${thousands(TOKENS)} distinct tokens (${tokenBytes.toFixed(0)} bytes each), sequential, ${ROUNDS} rounds per row taking turns, medians (load average ${loadavg()[0]!.toFixed(1)})\n`,
)
printTable(
  ['session read', 'reads/round', 'µs/op', 'spread µs/op', 'ops/s', 'x floor'],
  candidates.map(({ name, ops }, c) => [name, thousands(ops), us(medianUs[c]!), spread(roundsUs[c]!, us), thousands(1e6 / medianUs[c]!), (medianUs[c]! / floorUs).toFixed(2)]),
)

const medianOf = (name: string) => medianUs[candidates.findIndex((candidate) => candidate.name === name)] ?? Number.NaN
const authUs = medianOf('portcullis auth(req, res)')
console.log(`\nauth(req, res) = ${(authUs / floorUs).toFixed(2)}x the floor (target <= 3x)`)
console.log(`auth(req, res) on a cookie seen before = ${(medianOf('portcullis auth(req, res), warm') / floorUs).toFixed(2)}x the floor`)
console.log(`auth(req, res) is ${(medianOf('@auth/express getSession') / authUs).toFixed(0)}x faster than @auth/express getSession (target >= 30x)`)
if (betterAuth) {
  console.log(`auth(req, res) is ${(medianOf(BETTER_AUTH_ROW) / authUs).toFixed(0)}x faster than better-auth's getSession on SQLite, ${(medianOf(BETTER_AUTH_CACHED_ROW) / authUs).toFixed(0)}x faster than with its cookie cache`)
  betterAuth.close()
}
console.log(`auth(req, res) on a cookie seen before, with roles in it = ${(medianOf(ROLES_ROW) / medianOf('portcullis auth(req, res), warm')).toFixed(2)}x the same without (the warm row's ratio to the floor: ${(medianOf('portcullis auth(req, res), warm') / floorUs).toFixed(2)}x)`)
if (storeDb) {
  console.log(
    `auth(req, res) on a cookie seen before, with session.store = ${(medianOf(STORE_ROW) / medianOf('portcullis auth(req, res), warm')).toFixed(2)}x the same without a store (target <= 1.1x)`,
  )
  await storeDb.destroy()
}

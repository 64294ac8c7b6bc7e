/**
 * HTTP benchmark (`npm run bench`): requests per second and latency of `GET /me`, which reads the
 * session and answers it as JSON, under a bounded load on loopback. Each row's app runs in child
 * processes of its own (bench/http-server.ts, apps in bench/http-apps.ts): two servers of the same
 * code (BENCH_SERVERS), one for PostgreSQL, whose servers would share its tables. autocannon runs
 * here, so load generator and server never share an event loop. On a 2-core machine they share
 * the cores.
 *
 *   plain route        the Portcullis app's GET /plain: the same app, body and cookies, no session
 *                      read. The ceiling; every other row is a fraction of it.
 *   plain with await   GET /plain-async: the same body sent after `await` of a settled promise, as
 *                      GET /me sends the session after `await auth(req, res)`: what the await costs
 *   floor              the same app's GET /floor: the cold row's cookies decrypted inline, nothing
 *                      else (bench/floor.ts). The ceiling of any reader of a cookie it has not seen.
 *   JWT, cold          Portcullis, JWT session, 60,000 distinct cookies in turn: a cookie comes back
 *                      only after 60,000 requests, long after the 1,000-token cache dropped it, so
 *                      every request decrypts (a server seeing each browser once)
 *   JWT, warm          the same app with 1,000 cookies in turn, each sent many times (1,000 browsers):
 *                      after the first pass every read is a cache hit
 *   /api/auth/session  the warm row's cookies on Portcullis's own GET /api/auth/session (what browser
 *                      clients poll): the router, the session read and its JSON (issue 24: >= 0.85x plain)
 *   JWT + store, warm  the same as JWT, warm with `session.store` (revocable sessions, a Knex table on
 *                      in-memory SQLite): each session asked about once, then the store's changes
 *                      read at most every 5 s (issue 20: within 3 points of the warm row)
 *   database, SQLite   Portcullis, database session: KnexAdapter on better-sqlite3 (in memory), 5,000
 *                      sessions in turn; one join per request
 *   database, Postgres the same on PostgreSQL over loopback (skipped, with a line, when unreachable)
 *   API key            Portcullis, an API key in the Authorization header instead of a cookie: one
 *                      key per user in a KnexAdapter table on better-sqlite3 (in memory), 5,000 keys
 *                      in turn, no opened-key cache: one indexed lookup and join per request
 *   API key, cached    the same keys with the opened-key cache holding all of them (issue 60: within
 *                      the JWT warm row's ratio)
 *   @auth/express      getSession in the route, on the cold row's cookies (Auth.js caches nothing)
 *   Passport           passport.session() over express-session's MemoryStore, 5,000 sessions in
 *                      turn, the user deserialised by id from a Map
 *   better-auth        its getSession in the route as its Express guide shows, 5,000 sessions in its own
 *                      tables on SQLite in memory, read from the database; and with its cookie cache,
 *                      each cookie with the session_data its get-session set before the clock starts
 *
 * Method: every server starts first (and creates its sessions), then each gets a 0.5 s warm-up, then
 * each row runs 6 rounds (BENCH_ROUNDS) of 0.8 s (BENCH_ROUND_SECONDS) at 50 connections, its
 * servers taking turns (three rounds each), the rows taking turns within a round so a slow spell
 * of the machine is spread over all of them. Two processes of the same code can differ by several
 * per cent for their whole life (docs/performance-record.md, Node 24): a row measured on one would carry
 * that into its ratio. Each request takes the row's next cookie. A row reports the median of its
 * rounds (req/s, and autocannon's p50 and p99 latency in whole ms), the spread of req/s (min–max),
 * the server process's CPU time per request (all its threads, GC included: what the row costs,
 * whoever was the bottleneck), and its median req/s as a fraction of the plain route's.
 * BENCH_QUICK=1: 3 rounds of 0.8 s, 20,000 cold cookies, 2,000 sessions. BENCH_SQLITE=0 skips the
 * SQLite row (bench/settings.ts: so the rest runs on a Node the installed better-sqlite3 is not for).
 *
 * Targets (issue 24): JWT warm >= 0.95x plain, cold >= 0.95x the floor row, /api/auth/session warm >= 0.85x plain; JWT >= 5x @auth/express.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import autocannon from 'autocannon'
import type { Scenario } from './http-apps.js'
import type { ServerMessage } from './http-server.js'
import { answerAuthRouteFirst, apiKeyHeaders, bearerHeaders, betterAuthCookies, databaseSessionCookies, jwtStoreSessionCookies, HOST, jwtSessionCookies, passportSessionCookies, withSessionData } from './http-sessions.js'
import { benchFile, CPU_PROFILE_DIR, ensureBuilt, numberSetting, QUICK, rounds, sqliteUnavailable } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const CONNECTIONS = 50
const ROUNDS = rounds(6)
const ROUND_SECONDS = numberSetting('BENCH_ROUND_SECONDS', 0.8)
const WARMUP_SECONDS = 0.5
const COLD_COOKIES = QUICK ? 20_000 : 60_000
const WARM_COOKIES = 1_000
const SESSIONS = QUICK ? 2_000 : 5_000
const SERVERS_PER_ROW = numberSetting('BENCH_SERVERS', 2)
if (!Number.isInteger(SERVERS_PER_ROW)) throw new TypeError(`BENCH_SERVERS=${SERVERS_PER_ROW}: expected a whole number of servers per row`)

interface Server {
  port: number
  pid: number | undefined
  cpuMicros: () => Promise<number>
  stop: () => void
}

/** Starts `http-server.ts <scenario>` in a fresh Node and waits until it listens. */
function startServer(scenario: Scenario): Promise<Server | { skipped: string }> {
  const server = benchFile('http-server')
  const child: ChildProcess = fork(server.path, [scenario], {
    // BENCH_CPU_PROF=dir: each server writes a V8 CPU profile there when it stops (bench/README.md).
    execArgv: [...server.execArgv, ...(CPU_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROFILE_DIR}`] : [])],
    env: { ...process.env, BENCH_SESSIONS: String(SESSIONS) },
  })
  // One question at a time: each answer settles the question asked last.
  let pending: { resolve: (message: ServerMessage) => void; reject: (error: Error) => void } | undefined
  child.on('message', (message) => pending?.resolve(message as ServerMessage))
  child.on('exit', (code) => pending?.reject(new Error(`http-server.ts ${scenario} exited (${code}) before answering`)))
  const next = () => new Promise<ServerMessage>((resolve, reject) => void (pending = { resolve, reject }))
  return next().then((message) => {
    if ('skipped' in message) return message
    if (!('port' in message)) throw new Error(`http-server.ts ${scenario}: unexpected ${JSON.stringify(message)}`)
    return {
      port: message.port,
      pid: child.pid,
      cpuMicros: async () => {
        const answer = next()
        child.send('cpu')
        return ((await answer) as { cpuMicros: number }).cpuMicros
      },
      stop: () => child.send('stop'),
    }
  })
}

interface Row {
  name: string
  scenario: Scenario
  path: '/plain' | '/plain-async' | '/floor' | '/me' | '/api/auth/session'
  /** The header each request carries one of `cookies` in (default `cookie`). */
  header?: 'cookie' | 'authorization'
  cookies: () => string[]
}

let coldCookies: string[] = []
const allRows: Row[] = [
  { name: 'plain route (no session read)', scenario: 'jwt', path: '/plain', cookies: () => coldCookies },
  { name: 'plain route with an await (no session read)', scenario: 'jwt', path: '/plain-async', cookies: () => coldCookies.slice(0, WARM_COOKIES) },
  { name: 'floor (bare decrypt inline, cold cookies)', scenario: 'jwt', path: '/floor', cookies: () => coldCookies },
  { name: `Portcullis JWT, cold (${thousands(COLD_COOKIES)} cookies)`, scenario: 'jwt', path: '/me', cookies: () => coldCookies },
  { name: `Portcullis JWT, warm (${thousands(WARM_COOKIES)} cookies)`, scenario: 'jwt', path: '/me', cookies: () => coldCookies.slice(0, WARM_COOKIES) },
  { name: `Portcullis GET /api/auth/session, warm (${thousands(WARM_COOKIES)} cookies)`, scenario: 'jwt', path: '/api/auth/session', cookies: () => coldCookies.slice(0, WARM_COOKIES) },
  { name: `Portcullis JWT + session.store, warm (${thousands(WARM_COOKIES)} cookies)`, scenario: 'jwt-store', path: '/me', cookies: () => jwtStoreSessionCookies(WARM_COOKIES) },
  { name: 'Portcullis database, SQLite', scenario: 'database-sqlite', path: '/me', cookies: () => databaseSessionCookies(SESSIONS) },
  { name: 'Portcullis database, PostgreSQL', scenario: 'database-postgres', path: '/me', cookies: () => databaseSessionCookies(SESSIONS) },
  { name: `Portcullis API key, no cache (${thousands(SESSIONS)} keys)`, scenario: 'api-key', path: '/me', header: 'authorization', cookies: () => apiKeyHeaders(SESSIONS) },
  { name: `Portcullis API key, opened-key cache (${thousands(SESSIONS)} keys)`, scenario: 'api-key-cached', path: '/me', header: 'authorization', cookies: () => apiKeyHeaders(SESSIONS) },
  // The API key app's own plain route: what that app (its SQLite with the keys, users and Knex in the process) costs
  // without a read, so that the cached key read is compared with its own app's floor as the JWT rows are with theirs.
  { name: `plain route in the API key app (${thousands(SESSIONS)} keys)`, scenario: 'api-key-cached', path: '/plain', header: 'authorization', cookies: () => apiKeyHeaders(SESSIONS) },
  { name: `raw indexed key lookup + join, no Portcullis (${thousands(SESSIONS)} keys)`, scenario: 'api-key-raw', path: '/me', header: 'authorization', cookies: () => apiKeyHeaders(SESSIONS) },
  { name: `Portcullis OAuth access token (${thousands(SESSIONS)} tokens)`, scenario: 'bearer', path: '/me', header: 'authorization', cookies: () => bearerHeaders(SESSIONS) },
  { name: '@auth/express getSession', scenario: 'authjs', path: '/me', cookies: () => coldCookies },
  { name: 'Passport + express-session', scenario: 'passport', path: '/me', cookies: () => passportSessionCookies(SESSIONS) },
  { name: `better-auth getSession, SQLite (${thousands(SESSIONS)} sessions)`, scenario: 'better-auth', path: '/me', cookies: () => betterAuthCookies(SESSIONS) },
  // Its cache reads no database: 1,000 browsers, each given its session_data cookie before the clock starts (a request each).
  { name: `better-auth getSession, cookie cache (${thousands(WARM_COOKIES)} sessions)`, scenario: 'better-auth-cached', path: '/me', cookies: () => betterAuthCookies(WARM_COOKIES) },
]
const noSqlite = sqliteUnavailable()
// Both of these open a better-sqlite3 database: the session store's table is on in-memory SQLite too.
const sqliteScenarios: Scenario[] = ['database-sqlite', 'jwt-store', 'api-key', 'api-key-cached', 'api-key-raw', 'bearer', 'better-auth', 'better-auth-cached']
const rows = allRows.filter((row) => !(noSqlite && sqliteScenarios.includes(row.scenario)))
for (const row of allRows) if (!rows.includes(row)) console.log(`${noSqlite}: the row "${row.name}" is skipped.`)

interface Round {
  requestsPerSecond: number
  p50: number
  p99: number
  /** The server's CPU time (all its threads) per completed request, in µs. */
  cpuPerRequest: number
  failed: number
}

interface Running extends Row {
  /** The row's servers, the same app in separate processes; round `n` loads `servers[n % length]`. */
  servers: { server: Server; url: string }[]
  cookieList: string[]
  /** The next cookie to send: it carries over between rounds, so the cold row never repeats early. */
  nextCookie: number
  rounds: Round[]
}

/**
 * A row's servers: the PostgreSQL row's would share its tables, so it has one; so have the other libraries' rows,
 * whose ratios to Portcullis's (4-10×) are far beyond what two processes of the same code differ by, and whose
 * second server cost the whole run seconds it has not (`npm run bench` within 3 minutes: issue 68).
 */
const ONE_SERVER: Scenario[] = ['database-postgres', 'authjs', 'passport', 'better-auth', 'better-auth-cached']
const serversFor = (row: Row) => (ONE_SERVER.includes(row.scenario) ? 1 : SERVERS_PER_ROW)

// The servers start (and create their sessions) while the cookies are sealed here.
// The apps run the built package; build it once here, before the servers start.
ensureBuilt()
const starting = Promise.all(rows.map((row) => Promise.all(Array.from({ length: serversFor(row) }, () => startServer(row.scenario)))))
coldCookies = jwtSessionCookies(0, COLD_COOKIES)
const started = await starting
const running: Running[] = []
rows.forEach((row, i) => {
  const skipped = started[i]!.find((server) => 'skipped' in server)
  const servers = started[i]!.filter((server): server is Server => !('skipped' in server))
  if (skipped) {
    console.log(`${skipped.skipped}: the row "${row.name}" is skipped.`)
    for (const server of servers) server.stop()
    return
  }
  running.push({
    ...row,
    servers: servers.map((server) => ({ server, url: `http://${HOST}:${server.port}${row.path}` })),
    cookieList: row.cookies(),
    nextCookie: 0,
    rounds: [],
  })
  if (CPU_PROFILE_DIR) console.log(`${row.name}: CPU profiles of processes ${servers.map((server) => server.pid).join(', ')} in ${CPU_PROFILE_DIR}`)
})

// Every server must answer its row's first cookie with a session before it is timed; a Portcullis
// server answers an auth route first (answerAuthRouteFirst says why).
const PORTCULLIS_SCENARIOS: Scenario[] = ['jwt', 'jwt-store', 'database-sqlite', 'database-postgres', 'api-key', 'api-key-cached', 'bearer']
for (const row of running) {
  const header = row.header ?? 'cookie'
  for (const { server, url } of row.servers) {
    if (PORTCULLIS_SCENARIOS.includes(row.scenario)) await answerAuthRouteFirst(`http://${HOST}:${server.port}`, header === 'cookie' ? row.cookieList[0]! : '')
    const response = await fetch(url, { headers: { [header]: row.cookieList[0]! } })
    const body = (await response.json()) as { user?: { name?: string } }
    if (response.status !== 200 || !body.user?.name) throw new Error(`${row.name}: ${response.status} ${JSON.stringify(body)}`)
    // The cache's row times reads from the cache: every key is opened once before the clock starts
    // (a few rounds would otherwise use most keys for the first time, and time the database's reads).
    if (row.scenario === 'api-key-cached' || row.scenario === 'bearer') for (const key of row.cookieList) await (await fetch(url, { headers: { [header]: key } })).arrayBuffer()
    // better-auth's cookie cache: each browser holds the session_data cookie its client's get-session call set.
    if (row.scenario === 'better-auth-cached') row.cookieList = await withSessionData(`http://${HOST}:${server.port}`, row.cookieList)
  }
}

async function load(row: Running, { server, url }: Running['servers'][number], seconds: number): Promise<Round> {
  const header = row.header ?? 'cookie'
  const cpuBefore = await server.cpuMicros()
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    // autocannon stops at its first sample after `duration`: every 100 ms, not its default second,
    // so a 0.5 s warm-up lasts 0.5 s rather than 1 (its figures count the time it really ran).
    sampleInt: 100,
    requests: [
      {
        setupRequest: (request) => {
          request.headers = { ...request.headers, [header]: row.cookieList[row.nextCookie++ % row.cookieList.length] }
          return request
        },
      },
    ],
  })
  const cpuMicros = (await server.cpuMicros()) - cpuBefore
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: cpuMicros / result.requests.total,
    failed: result.non2xx + result.errors + result.timeouts,
  }
}

for (const row of running) for (const server of row.servers) await load(row, server, WARMUP_SECONDS)
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts with another row, so no row always follows the same one.
  for (let i = 0; i < running.length; i++) {
    const row = running[(i + round) % running.length]!
    row.rounds.push(await load(row, row.servers[round % row.servers.length]!, ROUND_SECONDS))
  }
}
for (const row of running) for (const { server } of row.servers) server.stop()

const plain = median(running[0]!.rounds.map((round) => round.requestsPerSecond))
console.log(
  `\nNode ${process.version}, loopback, autocannon ${CONNECTIONS} connections in this process, each row's app in ${SERVERS_PER_ROW} processes of its own taking turns (PostgreSQL and the other libraries: 1); ${ROUNDS} rounds of ${ROUND_SECONDS} s per row after ${WARMUP_SECONDS} s warm-up per server, medians (load average ${loadavg()[0]!.toFixed(1)})\n`,
)
printTable(
  ['HTTP GET /me', 'req/s', 'spread', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'x plain'],
  running.map(({ name, rounds }) => {
    const rate = median(rounds.map((round) => round.requestsPerSecond))
    return [
      name,
      thousands(rate),
      spread(rounds.map((round) => round.requestsPerSecond), thousands),
      median(rounds.map((round) => round.p50)).toFixed(0),
      median(rounds.map((round) => round.p99)).toFixed(0),
      median(rounds.map((round) => round.cpuPerRequest)).toFixed(0),
      (rate / plain).toFixed(2),
    ]
  }),
)

const failed = running.filter((row) => row.rounds.some((round) => round.failed > 0))
for (const row of failed) console.log(`\n${row.name}: ${row.rounds.reduce((sum, round) => sum + round.failed, 0)} failed requests (non-2xx, errors, timeouts): its figures are not valid.`)

/** The median over its rounds of a field of the row whose name starts with `scenarioName`. */
const medianOf = (scenarioName: string, field: 'requestsPerSecond' | 'cpuPerRequest') =>
  median(running.find((row) => row.name.startsWith(scenarioName))?.rounds.map((round) => round[field]) ?? [Number.NaN])
const rateOf = (scenarioName: string) => medianOf(scenarioName, 'requestsPerSecond')
// Steadier than the ratios of requests per second when a row's rounds spread widely: what each row costs the server.
const cpuOf = (scenarioName: string) => medianOf(scenarioName, 'cpuPerRequest')
const extra = (row: string, base: string) => `${(cpuOf(row) - cpuOf(base)).toFixed(0)} µs (${(cpuOf(row) / cpuOf(base)).toFixed(2)}x)`
const warm = rateOf('Portcullis JWT, warm')
const cold = rateOf('Portcullis JWT, cold')
const authjs = rateOf('@auth/express')
const floor = rateOf('floor')
console.log(`\nJWT warm = ${(warm / plain).toFixed(2)}x plain (target >= 0.95), JWT cold = ${(cold / plain).toFixed(2)}x plain = ${(cold / floor).toFixed(2)}x the floor (target >= 0.95; the floor: ${(floor / plain).toFixed(2)}x plain)`)
console.log(`GET /api/auth/session, warm = ${(rateOf('Portcullis GET /api/auth/session') / plain).toFixed(2)}x plain (target >= 0.85)`)
const plainAwait = rateOf('plain route with an await')
console.log(`JWT warm = ${(warm / plainAwait).toFixed(2)}x the plain route with an await (the plain route with an await = ${(plainAwait / plain).toFixed(2)}x plain)`)
const warmStore = rateOf('Portcullis JWT + session.store')
console.log(`JWT warm with session.store = ${(warmStore / plain).toFixed(2)}x plain, ${((warm - warmStore) / plain * 100).toFixed(1)} points under JWT warm (target: within 3)`)
console.log(`JWT warm = ${(warm / authjs).toFixed(1)}x and JWT cold = ${(cold / authjs).toFixed(1)}x @auth/express getSession on the same cookies (target >= 5x)`)
if (rows.some((row) => row.scenario === 'better-auth')) {
  const betterAuth = rateOf('better-auth getSession, SQLite')
  const betterAuthCached = rateOf('better-auth getSession, cookie cache')
  console.log(`JWT cold = ${(cold / betterAuthCached).toFixed(1)}x better-auth's getSession with its cookie cache, ${(cold / betterAuth).toFixed(1)}x on SQLite; the database session on SQLite = ${(rateOf('Portcullis database, SQLite') / betterAuth).toFixed(1)}x better-auth's on SQLite`)
}
const rawKey = rateOf('raw indexed key lookup')
console.log(`API key, no cache = ${(rawKey / rateOf('Portcullis API key, no cache')).toFixed(2)}x the raw indexed lookup's time per request (target <= 1.1x; server CPU ${extra('Portcullis API key, no cache', 'raw indexed key lookup')} over it)`)
console.log(`API key = ${(rateOf('Portcullis API key, no cache') / plain).toFixed(2)}x plain, ${(rateOf('Portcullis API key, no cache') / rateOf('Portcullis database, SQLite')).toFixed(2)}x the database session on SQLite; with the opened-key cache ${(rateOf('Portcullis API key, opened-key cache') / plain).toFixed(2)}x plain (target: within JWT warm's ${(warm / plain).toFixed(2)}x)`)
console.log(`API key, opened-key cache = ${(rateOf('Portcullis API key, opened-key cache') / rateOf('plain route in the API key app')).toFixed(2)}x the plain route of its own app (that plain route ${(rateOf('plain route in the API key app') / plain).toFixed(2)}x the JWT app's; JWT warm ${(warm / plain).toFixed(2)}x its app's plain route)`)
console.log(`OAuth access token = ${(rateOf('Portcullis OAuth access token') / plain).toFixed(2)}x plain (target: within JWT warm's ${(warm / plain).toFixed(2)}x; server CPU ${extra('Portcullis OAuth access token', 'plain')} over plain, JWT warm ${extra('Portcullis JWT, warm', 'plain')})`)
console.log(`Server CPU per request: JWT warm ${extra('Portcullis JWT, warm', 'plain')} over plain (${extra('Portcullis JWT, warm', 'plain route with an await')} over plain with an await), GET /api/auth/session ${extra('Portcullis GET /api/auth/session', 'plain')}, JWT cold ${extra('Portcullis JWT, cold', 'floor')} over the floor`)

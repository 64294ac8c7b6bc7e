/**
 * Where a warm `GET /me` spends its CPU time over the plain route (`npm run bench:steady-split`, not
 * part of `npm run bench`): one server of the HTTP bench's Portcullis app with two routes more
 * (bench/steady-split-server.ts), its routes taking turns in windows of `WINDOW` requests, each
 * window's figure the CPU time the server's main thread ran for over it (`/proc/<pid>/schedstat`,
 * in ns: user and system time together, as the scheduler counts it). Each route's figure in a round
 * is divided by the plain route's in the same round, and a row gives the median of those ratios
 * and their spread.
 *
 * Why one server and paired ratios: bench/steady-cpu.ts starts a fresh server per row and round, the
 * way the instruction count does; fresh servers of the same row differ by up to 10% in CPU time (the
 * JIT's choices, the heap's layout), more than the parts measured here. In one server every route
 * runs on the same compiled Express and Node code, and taking turns cancels the machine's drift.
 *
 * The rows, all warm (the first 1,000 cookies in turn):
 *
 *   plain          GET /plain: Express, the same body, no session
 *   plain + await  GET /plain-async: the same after an `await` of a settled promise
 *   read           GET /read: the session read alone, answered at once (no await, no req.auth)
 *   read + await   GET /read-await: the same read, its result awaited first
 *   auth()         GET /me: `await auth(req, res)`, what the README shows and bench/http.ts times
 *
 * So `read` ÷ plain is the read's own cost, `read + await` ÷ `read` the await's, and `auth()` ÷
 * `read + await` what auth() adds to the read (its record of the request's read, `req.auth`, its
 * promise). And cold, against the floor (cookies each sent once in `COLD_COOKIES` requests: a
 * cookie comes back only long after the token cache's record of cookies seen once has forgotten it):
 *
 *   floor          GET /floor: the cookie decrypted inline (bench/floor.ts), the session answered
 *   read, cold     GET /read on those cookies
 *   auth(), cold   GET /me on those cookies
 *
 * Everything runs with the count's node flags (`--single-threaded --no-memory-reducer`).
 * Only where /proc is (Linux). BENCH_QUICK=1: windows of 1,000 requests, 3 rounds: a check that it
 * runs, not figures.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { jwtSessionCookies } from './http-sessions.js'
import { ensureBuilt, QUICK, rounds } from './settings.js'
import { sendRequests, warmServer, type SteadyRow } from './steady-server.js'
import { median, printTable, spread } from './table.js'

const WARMUP = QUICK ? 1_000 : 30_000
const WINDOW = QUICK ? 1_000 : 30_000
const ROUNDS = rounds(8)

if (!existsSync('/proc/self/schedstat')) {
  console.log('bench/steady-split.ts reads a process\'s CPU time from /proc/<pid>/schedstat (Linux): nothing measured.')
  process.exit(0)
}
ensureBuilt()

const rows: SteadyRow[] = [
  { name: 'plain (no session read)', path: '/plain', kind: 'warm' },
  { name: 'plain + await', path: '/plain-async', kind: 'warm' },
  { name: 'read (the session read alone)', path: '/read', kind: 'warm' },
  { name: 'read + await', path: '/read-await', kind: 'warm' },
  { name: 'auth() (GET /me)', path: '/me', kind: 'warm' },
  { name: 'floor (bare decrypt inline)', path: '/floor', kind: 'cold' },
  { name: 'read, cold', path: '/read', kind: 'cold' },
  { name: 'auth(), cold', path: '/me', kind: 'cold' },
]
const [plainAwait, read, readAwait, me, floor, coldRead, coldMe] = [1, 2, 3, 4, 5, 6, 7]
const COLD_COOKIES = QUICK ? 5_000 : 50_000
const warmCookies = jwtSessionCookies(0, 1_000)
const coldCookies = jwtSessionCookies(1_000, COLD_COOKIES)
const cookiesOf = (row: SteadyRow) => (row.kind === 'cold' ? coldCookies : warmCookies)
/** Where each row goes on in its cookies: a cold row's next window starts where its last one stopped. */
const next = rows.map(() => 0)
/** Sends `amount` requests of row `i`. */
async function send(i: number, amount: number): Promise<void> {
  const row = rows[i]!
  await sendRequests(port, row, cookiesOf(row), next[i]!, amount)
  if (row.kind === 'cold') next[i] = (next[i]! + amount) % COLD_COOKIES
}
const server = fileURLToPath(new URL('steady-split-server.ts', import.meta.url))

/** ns the main thread of process `pid` has run for so far. */
const ranFor = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])

const { port, child, exited } = await warmServer(process.execPath, ['--single-threaded', '--no-memory-reducer', '--import', 'tsx', server], rows[0]!, warmCookies, WARMUP)
const perRequest: number[][] = rows.map(() => [])
try {
  for (let i = 1; i < rows.length; i++) await send(i, WARMUP)
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < rows.length; i++) {
      const before = ranFor(child.pid!)
      await send(i, WINDOW)
      perRequest[i]!.push((ranFor(child.pid!) - before) / 1000 / WINDOW)
    }
  }
} finally {
  child.kill()
  await exited
}

/** The ratios of row `i` to row `j`, round by round. */
const ratios = (i: number, j: number) => perRequest[i]!.map((value, round) => value / perRequest[j]![round]!)

console.log(
  `\nNode ${process.version}, one server, the rows taking turns in windows of ${WINDOW.toLocaleString('en')} requests (${ROUNDS} rounds, after ${WARMUP.toLocaleString('en')} a row uncounted); CPU time of the server's main thread a request, user and system\n`,
)
/** Row `i` against row `base`: its µs a request, and the median and spread of its ratios. */
const against = (i: number, base: number) => [rows[i]!.name, median(perRequest[i]!).toFixed(2), median(ratios(i, base)).toFixed(3), spread(ratios(i, base), (ratio) => ratio.toFixed(3))]
printTable(['warm, 1,000 cookies', 'µs/req (median)', 'x plain (median of rounds)', 'spread'], [0, plainAwait, read, readAwait, me].map((i) => against(i, 0)))
console.log('')
printTable([`cold, ${COLD_COOKIES.toLocaleString('en')} cookies in turn`, 'µs/req (median)', 'x floor (median of rounds)', 'spread'], [floor, coldRead, coldMe].map((i) => against(i, floor)))
console.log(
  `\nwarm: the read alone = ${median(ratios(read, 0)).toFixed(3)}x plain; its await = ${median(ratios(readAwait, read)).toFixed(3)}x the read; what auth() adds = ${median(ratios(me, readAwait)).toFixed(3)}x the awaited read; plain + await = ${median(ratios(plainAwait, 0)).toFixed(3)}x plain`,
)
console.log(`cold: the read alone = ${median(ratios(coldRead, floor)).toFixed(3)}x the floor; auth() = ${median(ratios(coldMe, floor)).toFixed(3)}x the floor, ${median(ratios(coldMe, coldRead)).toFixed(3)}x the read alone`)

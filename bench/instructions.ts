/**
 * Instructions per request (`npm run bench:instructions`, not part of `npm run bench`): the HTTP
 * bench's JWT routes counted by valgrind's callgrind instead of timed. On the project's shared
 * 2-core virtual machine a round of bench/http.ts swings by 20-50% and a row's median by 10%, so a
 * 5% difference between two rows (issue 24's targets) drowns; a count does not depend on what else
 * the machine is doing. But a count is not a time: bench/steady-cpu.ts times the same rows natively,
 * and on 2026-11-28 the instructions Portcullis adds to a route took four to five times their share
 * of the instructions in CPU time (docs/performance.md).
 *
 * Method: for each row, the HTTP bench's Portcullis app (bench/instructions-server.ts) runs under
 * `valgrind --tool=callgrind --instr-atstart=no` with `node --single-threaded` (the garbage
 * collector and the JIT compilers on the main thread, so their work is counted too). It answers
 * `WARMUP` requests from autocannon (10 connections, the row's cookies in turn) uncounted, as fast
 * as valgrind runs code it does not count (the cold row's first 1,200 cookies twice, for the reason
 * bench/callgrind.ts's RETURNING_COOKIES gives); then callgrind starts counting
 * (`callgrind_control -i on`), the server answers `WINDOW` more, and callgrind writes its count
 * (`callgrind_control --dump`): the row's figure is that count over `WINDOW`. The window is the
 * server's steady state: the JIT has compiled the route's code long before it (on Node 24 TurboFan
 * was still compiling Express's and Portcullis's functions past the 10,000th request), and 20,000
 * requests hold many young-generation collections. Node runs with `--no-memory-reducer`: V8's
 * memory reducer starts a mark-compact once 100 s have passed since the last one, however busy the
 * heap: natively once in some fifty windows' worth of requests, but valgrind, taking one to two
 * minutes over a window, met it in about every other one, and such a collection moved the floor's
 * and the cold row's counts by 6% (docs/performance-record.md, "The steady state, counted"). Runs
 * of a row agree within 1% on Node 24, within 3% on Node 20. The method before it, the difference
 * of two processes' whole counts between the 3,000th and 7,000th request, spread by 10% between
 * runs, the compilations it held included. The kernel's share of a request (the socket's system
 * calls) is not counted, so the ratios here overstate a row's share of the server's CPU time a
 * little. About a minute a row on Node 24, two and a half on Node 20; BENCH_QUICK=1 counts a few
 * hundred requests, early: a check that it runs, not figures.
 *
 * BENCH_INSTRUCTIONS=pipeline counts the same rows with the app driven in process instead
 * (bench/instructions-pipeline.ts: Express's whole pipeline on requests without a socket, 50 to a
 * turn of the event loop), the same warm-up and window, counted by the script itself: no load
 * generator. The socket's share (the HTTP parser, the write) is left out, so each row's difference
 * from the plain route is a larger fraction here than over HTTP.
 *
 * BENCH_CACHE_SIM=1 has callgrind simulate the caches and the branch predictor too (about twice as
 * slow) and prints, beside the counts, each row's misses of the L1 instruction and data caches and
 * of the last level, and its mispredicted branches, a request: what makes an instruction cost more
 * time in one row than in another, which the count alone does not show (docs/performance.md, "Where
 * the warm read's time goes"). The simulated caches are callgrind's model of this machine's, not
 * the machine's own counters (a virtual machine here has none).
 *
 * Each row is also given without the garbage collector's own instructions (`COLLECTOR` in bench/callgrind.ts, read from the
 * dump by function name). Whether a scavenge or a stretch of incremental marking falls into a row's
 * window moves its count by several percent, and a build that allocates the same can still collect at
 * another rate when V8 sizes its young generation differently (docs/performance-record.md: on Node
 * 24 the bundled build's windows held 45,000-63,000 collector instructions a request, the previous
 * build's 900-2,500), so every row's young generation is pinned at 16 MB a semi-space unless
 * `BENCH_SEMI_SPACE` says otherwise. `BENCH_CALLGRIND_KEEP=1` keeps the dumps.
 *
 * Each server answers GET /api/auth/session once before the counted requests, as bench/http.ts's
 * servers do before they are timed (bench/http-sessions.ts's answerAuthRouteFirst says why).
 *
 * Rows (bench/http.ts describes them): the plain route, the plain route with an await, the floor,
 * Portcullis JWT cold and warm, and GET /api/auth/session warm; the credential rows (an access token,
 * an API key, each against its app's plain route); `requirePermission` with an active organization
 * against `/me` of the same app (bench/steady-server.ts's organizationRows). Skipped, with a line, where
 * valgrind is not installed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { callgrindControl, collectorInstructions } from './callgrind.js'
import { jwtSessionCookies } from './http-sessions.js'
import { credentialRows, organizationRows, rowCookies, sendRequests, serverArgs, steadyRows, warmServer, type SteadyRow } from './steady-server.js'
import { ensureBuilt, QUICK } from './settings.js'
import { printTable, thousands } from './table.js'

/** `BENCH_INSTRUCTIONS=pipeline`: the app driven in process, no socket (bench/instructions-pipeline.ts). */
const PIPELINE = process.env.BENCH_INSTRUCTIONS === 'pipeline'
/** `BENCH_CACHE_SIM=1`: the caches and the branch predictor simulated too. */
const CACHE_SIM = process.env.BENCH_CACHE_SIM === '1'
/**
 * Each semi-space of the young generation pinned at this many MB (V8's `--min-semi-space-size` and
 * `--max-semi-space-size`): 16 unless `BENCH_SEMI_SPACE` gives another number, or `off` for V8's own
 * sizing. Unpinned, V8 grows it with the survival rate, so two builds of the same read can collect at
 * different rates and a collection can fall into one row's window and not another's; pinned, every
 * row scavenges once per the same number of bytes allocated, and counts of two builds compare.
 */
const SEMI_SPACE = semiSpace(process.env.BENCH_SEMI_SPACE ?? '16')
/** `BENCH_CALLGRIND_KEEP=1`: each row's dump is kept (its path printed), for `callgrind_annotate`. */
const KEEP_DUMPS = process.env.BENCH_CALLGRIND_KEEP === '1'
const WARMUP = QUICK ? 300 : 30_000
const WINDOW = QUICK ? 500 : 20_000

type Row = SteadyRow

for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate']) {
  if (spawnSync(tool, ['--version']).error) {
    console.log(`${tool} is not installed: bench/instructions.ts counts with valgrind's callgrind tool (apt-get install valgrind). Nothing measured.`)
    process.exit(0)
  }
}
ensureBuilt()
// Over HTTP autocannon sends cookies sealed here; in process, bench/instructions-pipeline.ts seals its own.
const cold = PIPELINE ? [] : jwtSessionCookies(0, WARMUP + WINDOW)
// The credential rows (issue 68) and the organization's permission check (issue 67) over HTTP only: the pipeline
// drives the JWT app alone. BENCH_CREDENTIALS=0 and BENCH_ORGANIZATION=0 leave them out; BENCH_STEADY=0 the JWT rows.
const steady = process.env.BENCH_STEADY !== '0'
const rows = [
  ...(steady ? steadyRows(WARMUP + WINDOW) : []),
  ...(PIPELINE || process.env.BENCH_CREDENTIALS === '0' ? [] : credentialRows()),
  ...(PIPELINE || process.env.BENCH_ORGANIZATION === '0' ? [] : organizationRows()),
]

const server = fileURLToPath(new URL('instructions-server.ts', import.meta.url))
const pipeline = fileURLToPath(new URL('instructions-pipeline.ts', import.meta.url))

/** callgrind under `dir`, counting nothing until told, and its arguments for the node process it runs. */
const callgrind = (dir: string, ...node: string[]) => [
  '--tool=callgrind',
  ...(CACHE_SIM ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
  '--instr-atstart=no',
  `--log-file=${join(dir, 'log')}`,
  `--callgrind-out-file=${join(dir, 'out')}`,
  process.execPath,
  '--single-threaded',
  // Valgrind's slowness would meet the memory reducer's 100-second watchdog (see the method above).
  '--no-memory-reducer',
  ...(SEMI_SPACE ? [`--min-semi-space-size=${SEMI_SPACE}`, `--max-semi-space-size=${SEMI_SPACE}`] : []),
  '--import',
  'tsx',
  ...node,
]

/**
 * The totals of callgrind's first dump in `dir` (`out.1`, written by `callgrind_control --dump`), by
 * event: `Ir` (instructions), and with the simulation `I1mr`, `D1mr`, `D1mw`, `ILmr`, `DLmr`, `DLmw`,
 * `Bcm`, `Bim` (callgrind's names).
 */
function dumped(row: Row, dir: string): Record<string, number> {
  const dump = readFileSync(join(dir, 'out.1'), 'utf8')
  const events = /^events: (.+)$/m.exec(dump)
  const totals = /^totals: ([\d ]+)$/m.exec(dump)
  if (!events || !totals) throw new Error(`callgrind's dump for ${row.name} holds no totals (${dir})`)
  const values = totals[1]!.trim().split(' ').map(Number)
  return { ...Object.fromEntries(events[1]!.trim().split(' ').map((name, i) => [name, values[i] ?? 0])), collector: collectorInstructions(join(dir, 'out.1')) }
}


/** The instructions the server executes over `WINDOW` requests of `row`, after `WARMUP` uncounted ones. */
async function countHttp(row: Row, dir: string): Promise<Record<string, number>> {
  const cookies = rowCookies(row, cold)
  const { port, child, exited } = await warmServer('valgrind', callgrind(dir, server, ...serverArgs(row)), row, cookies, WARMUP, `; callgrind's log: ${join(dir, 'log')}`)
  try {
    await callgrindControl(child.pid!, '--instr=on')
    await sendRequests(port, row, cookies, WARMUP, WINDOW)
    await callgrindControl(child.pid!, '--dump')
  } finally {
    child.kill()
    await exited
  }
  return dumped(row, dir)
}

/** The same, in process: the script turns the count on and dumps it itself. */
async function countPipeline(row: Row, dir: string): Promise<Record<string, number>> {
  const child = spawn('valgrind', callgrind(dir, pipeline, row.path, row.kind, String(WARMUP), String(WINDOW)), { stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  if (code !== 0) throw new Error(`instructions-pipeline.ts ${row.path} exited (${code}); callgrind's log: ${join(dir, 'log')}`)
  return dumped(row, dir)
}

const counted: Record<string, number>[] = []
for (const row of rows) {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-callgrind-'))
  counted.push(await (PIPELINE ? countPipeline : countHttp)(row, dir))
  if (KEEP_DUMPS) console.log(`${row.name}: callgrind's dump kept in ${join(dir, 'out.1')}`)
  else rmSync(dir, { recursive: true, force: true })
}
/** The events `names` together a request, per row (an event callgrind did not record counts 0). */
const eachRequest = (...names: string[]) => counted.map((events) => names.reduce((sum, name) => sum + (events[name] ?? 0), 0) / WINDOW)
const perRequest = eachRequest('Ir')

const [plain, plainAwait, floor, coldMe, warmMe, sessionRoute] = perRequest as [number, number, number, number, number, number]
const how = [PIPELINE ? 'in process, no socket (BENCH_INSTRUCTIONS=pipeline)' : '10 connections', SEMI_SPACE ? `semi-spaces pinned at ${SEMI_SPACE} MB` : 'semi-spaces sized by V8 (BENCH_SEMI_SPACE=off)'].join('; ')
console.log(
  `\nNode ${process.version}, callgrind, the server's instructions per request over ${thousands(WINDOW)} requests after ${thousands(WARMUP)} uncounted (${how})\n`,
)
const collector = eachRequest('collector')
const without = perRequest.map((count, i) => count - collector[i]!)
printTable(
  ['HTTP, instructions per request', 'instructions', 'x plain', "the collector's", 'without them', 'x plain, without'],
  rows.map((row, i) => [row.name, thousands(perRequest[i]!), (perRequest[i]! / plain).toFixed(3), thousands(collector[i]!), thousands(without[i]!), (without[i]! / without[0]!).toFixed(3)]),
)
if (steady) {
  console.log(`\nPortcullis JWT warm costs ${thousands(warmMe - plain)} instructions a request over the plain route (${((100 * (warmMe - plain)) / plain).toFixed(1)}%),`)
  console.log(`${thousands(warmMe - plainAwait)} over the plain route with an await (${((100 * (warmMe - plainAwait)) / plainAwait).toFixed(1)}%; the await alone: ${thousands(plainAwait - plain)}),`)
  console.log(`cold ${thousands(coldMe - floor)} over the floor (${((100 * (coldMe - floor)) / floor).toFixed(1)}%), GET /api/auth/session warm ${thousands(sessionRoute - plain)} over plain.`)
  const [, plainAwaitWithout, floorWithout, coldWithout, warmWithout] = without as [number, number, number, number, number]
  console.log(`Without the collector's functions: warm ${(warmWithout / plainAwaitWithout).toFixed(3)}× the plain route with an await, cold ${(coldWithout / floorWithout).toFixed(3)}× the floor.`)
}
// The credential rows against the plain route of their own app (the same app, the read left out).
for (let i = 0; i + 1 < rows.length; i++) {
  const [route, read] = [rows[i]!, rows[i + 1]!]
  // And the permission check against the route it guards (`/me` of the same app).
  const against = route.credential && route.path === '/plain' && read.credential === route.credential ? 'its plain route' : route.organization && read.organization ? 'the route it guards' : undefined
  if (against) {
    console.log(`${read.name}: ${thousands(perRequest[i + 1]! - perRequest[i]!)} instructions a request over ${against}, ${(perRequest[i + 1]! / perRequest[i]!).toFixed(3)}× (target ≤ 1.053×); without the collector's ${(without[i + 1]! / without[i]!).toFixed(3)}×`)
  }
}
if (CACHE_SIM) {
  // Misses of the simulated caches and predictors a request (callgrind's model, BENCH_CACHE_SIM=1), each x plain's.
  const columns: [string, number[]][] = [
    ['L1 instruction misses', eachRequest('I1mr')],
    ['L1 data misses', eachRequest('D1mr', 'D1mw')],
    ['last-level misses', eachRequest('ILmr', 'DLmr', 'DLmw')],
    ['branches mispredicted', eachRequest('Bcm', 'Bim')],
  ]
  console.log('\nSimulated caches and branch predictor (BENCH_CACHE_SIM=1), a request, and x plain:\n')
  printTable(
    ['HTTP, a request', ...columns.map(([name]) => name)],
    rows.map((row, i) => [row.name, ...columns.map(([, values]) => `${thousands(values[i]!)} (${(values[i]! / values[0]!).toFixed(3)})`)]),
  )
}

/** `BENCH_SEMI_SPACE`'s value: a whole number of MB, or undefined for `off`. */
function semiSpace(value: string): string | undefined {
  if (value === 'off') return undefined
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`BENCH_SEMI_SPACE=${value}: a whole number of MB, or off, is expected`)
  return value
}

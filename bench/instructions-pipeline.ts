/**
 * The HTTP bench's Portcullis app driven in process, for `BENCH_INSTRUCTIONS=pipeline
 * npm run bench:instructions`: under `valgrind --tool=callgrind --instr-atstart=no`, `node --import tsx
 * bench/instructions-pipeline.ts <path> <cold|warm> <warmup> <window>` hands `warmup` requests for
 * `path` to Express's whole pipeline (`app(req, res)`, router, route, `res.json`) without a socket, 50
 * to a turn of the event loop, then turns callgrind's count on, hands it `window` more, dumps the count
 * and exits. No network, no load generator. What a socket costs the server (the HTTP parser, the
 * write) is left out, so a row's share of the plain route is larger here than over HTTP.
 *
 * `cold`: each request its own cookie (but the first 1,200, which the warm-up starts with twice, as
 * bench/callgrind.ts's RETURNING_COOKIES says why); `warm`: 1,000 cookies in turn. They are sealed
 * before the warm-up, uncounted.
 */
import { Socket } from 'node:net'
import { callgrindControl, RETURNING_COOKIES } from './callgrind.js'
import { pipelineRequest, portcullisBenchApp } from './http-portcullis-app.js'
import { jwtSessionCookies } from './http-sessions.js'

const WARM_COOKIES = 1_000
const PER_TURN = 50

const [path = '/plain', kind = 'warm', warmupArgument = '0', windowArgument = '0'] = process.argv.slice(2)
const warmup = Number(warmupArgument)
const window = Number(windowArgument)
if (!['cold', 'warm'].includes(kind) || !(warmup >= 0) || !(window > 0)) throw new TypeError('usage: instructions-pipeline.ts <path> <cold|warm> <warmup> <window>')
const cookies = jwtSessionCookies(0, kind === 'cold' ? warmup + window : WARM_COOKIES)

const app = portcullisBenchApp()
const socket = new Socket()
// One auth route first, in process, as bench/http-sessions.ts's answerAuthRouteFirst does over HTTP (it says why).
const authRoute = pipelineRequest(socket, '/api/auth/session', cookies[0]!)
app(authRoute.req as never, authRoute.res as never)
// Its first answer loads and compiles the router's code: under valgrind that takes a while of wall time.
for (let waited = 0; !authRoute.res.writableEnded; waited += 10) {
  if (waited >= 10_000) throw new Error('GET /api/auth/session was not answered within 10 s')
  await new Promise((resolve) => setTimeout(resolve, 10))
}

/** Hands `requests` requests to the app, from the `from`th cookie on, and waits for their answers. */
async function run(from: number, requests: number): Promise<void> {
  let unanswered = 0
  for (let i = 0; i < requests; i++) {
    const { req, res } = pipelineRequest(socket, path, cookies[(from + i) % cookies.length]!)
    app(req as never, res as never)
    if (i % PER_TURN === PER_TURN - 1 || i === requests - 1) {
      await new Promise((resolve) => setImmediate(resolve))
      if (!res.writableEnded) unanswered++
    }
  }
  if (unanswered > 0) throw new Error(`${unanswered} turns ended with their last request unanswered`)
}

if (kind === 'cold') await run(0, Math.min(RETURNING_COOKIES, warmup))
await run(0, warmup)
await callgrindControl(process.pid, '--instr=on')
await run(warmup, window)
await callgrindControl(process.pid, '--dump')

/**
 * The HTTP bench's Portcullis app driven in process, for `BENCH_INSTRUCTIONS=pipeline
 * npm run bench:instructions`: `node --import tsx bench/instructions-pipeline.ts <path> <requests>
 * <cookies> <sealed>` hands `requests` requests for `path` to Express's whole pipeline (`app(req, res)`,
 * router, route, `res.json`) without a socket, 50 to a turn of the event loop, and exits. No
 * network, no load generator: the count no longer depends on how requests happen to arrive, the
 * main source of the HTTP count's spread. What a socket costs the server (the HTTP parser, the
 * write) is left out, so a row's share of the plain route is larger here than over HTTP.
 *
 * `<cookies>`: `cold` (each request its own cookie) or `warm` (1,000 cookies in turn). Either way the
 * script seals `<sealed>` cookies first (at least `<requests>`), the same number for both of the
 * counts bench/instructions.ts subtracts, so that work cancels out.
 */
import { Socket } from 'node:net'
import { pipelineRequest, portcullisBenchApp } from './http-portcullis-app.js'
import { jwtSessionCookies } from './http-sessions.js'

const WARM_COOKIES = 1_000
const PER_TURN = 50

const [path = '/plain', requestsArgument = '0', kind = 'warm', sealedArgument = '0'] = process.argv.slice(2)
const requests = Number(requestsArgument)
const count = Math.max(Number(sealedArgument), WARM_COOKIES)
if (!(requests <= count) || !['cold', 'warm'].includes(kind)) throw new TypeError('usage: instructions-pipeline.ts <path> <requests> <cold|warm> <sealed ≥ requests>')
const sealed = jwtSessionCookies(0, count)
const cookies = kind === 'cold' ? sealed : sealed.slice(0, WARM_COOKIES)

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
let unanswered = 0
for (let i = 0; i < requests; i++) {
  const { req, res } = pipelineRequest(socket, path, cookies[i % cookies.length]!)
  app(req as never, res as never)
  if (i % PER_TURN === PER_TURN - 1 || i === requests - 1) {
    await new Promise((resolve) => setImmediate(resolve))
    if (!res.writableEnded) unanswered++
  }
}
if (unanswered > 0) throw new Error(`${unanswered} turns ended with their last request unanswered`)

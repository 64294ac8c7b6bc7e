/**
 * What a token request costs the client (`npm run bench:fetch`, not part of `npm run bench`): the
 * question behind not giving openid-client a `fetch` of our own (docs/performance.md, sign-in).
 * A token-endpoint-shaped POST (form body, Basic auth, a 1.1 KB JSON answer) to a server in a child
 * process, over loopback with keep-alive, one request at a time, three ways:
 *
 *   fetch                    what openid-client does: `fetch` with `redirect: 'manual'` and
 *                            `AbortSignal.timeout`, then `response.json()`
 *   node:http + Response     `http.request`, the body collected, a `Response` made of it, `.json()`
 *                            (what a custom fetch handed to openid-client would have to return)
 *   node:http + JSON.parse   the floor: the same request, the body parsed directly
 *
 * Method: 200 unmeasured requests per row per round, then 1,500 measured; 4 rounds (BENCH_ROUNDS),
 * the rows taking turns. A row reports the median over its rounds of the client process's CPU time
 * (user + system) per request, and of the wall time per request. BENCH_QUICK=1: 300 per round.
 */
import { fork } from 'node:child_process'
import { Agent, request } from 'node:http'
import { loadavg } from 'node:os'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread } from './table.js'

const ROUNDS = rounds(4)
const REQUESTS = QUICK ? 300 : 1_500
const WARMUP = 200
const ANSWER = JSON.stringify({ access_token: 'a'.repeat(40), token_type: 'Bearer', expires_in: 3600, id_token: 'x'.repeat(900), scope: 'openid profile email' })

// The server: a child process of its own, so that its CPU is not the client's.
if (process.argv[2] === 'server') {
  const { createServer } = await import('node:http')
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      res.end(ANSWER)
    })
  })
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port))
} else {
  const child = fork(new URL(import.meta.url), ['server'], { execArgv: process.execArgv })
  const port = await new Promise<number>((resolve) => child.once('message', (message) => resolve(message as number)))
  const url = `http://127.0.0.1:${port}/token`
  const body = `grant_type=authorization_code&code=abc&redirect_uri=http%3A%2F%2Flocalhost%2Fcallback&code_verifier=${'v'.repeat(43)}`
  const headers = {
    'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
    accept: 'application/json',
    'user-agent': 'bench',
    authorization: `Basic ${Buffer.from('client:secret').toString('base64')}`,
  }
  const agent = new Agent({ keepAlive: true })

  /** One request over node:http: the response and its whole body. */
  const overHttp = () =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const outgoing = request(url, { method: 'POST', headers, agent, signal: AbortSignal.timeout(30_000) }, (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('end', () => resolve({ status: incoming.statusCode!, headers: incoming.headers, body: Buffer.concat(chunks) }))
        incoming.on('error', reject)
      })
      outgoing.on('error', reject)
      outgoing.end(body)
    })

  const rows: { name: string; run: () => Promise<unknown>; cpu: number[]; wall: number[] }[] = [
    { name: 'fetch + json() (openid-client today)', run: async () => (await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(30_000) })).json(), cpu: [], wall: [] },
    {
      name: 'node:http + Response + json()',
      run: async () => {
        const answer = await overHttp()
        const responseHeaders = new Headers()
        for (const [name, value] of Object.entries(answer.headers)) if (typeof value === 'string') responseHeaders.set(name, value)
        return new Response(answer.body.toString(), { status: answer.status, headers: responseHeaders }).json()
      },
      cpu: [],
      wall: [],
    },
    { name: 'node:http + JSON.parse (floor)', run: async () => JSON.parse((await overHttp()).body.toString()), cpu: [], wall: [] },
  ]

  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[(i + round) % rows.length]!
      for (let n = 0; n < WARMUP; n++) await row.run()
      const cpu = process.cpuUsage()
      const start = performance.now()
      for (let n = 0; n < REQUESTS; n++) await row.run()
      const used = process.cpuUsage(cpu)
      row.cpu.push((used.user + used.system) / REQUESTS)
      row.wall.push(((performance.now() - start) * 1000) / REQUESTS)
    }
  }
  child.kill()
  agent.destroy()

  const floor = median(rows.at(-1)!.cpu)
  const us = (value: number) => value.toFixed(0)
  console.log(`\nNode ${process.version}, a token request over loopback, one at a time, ${ROUNDS} rounds of ${REQUESTS} per row, medians (load average ${loadavg()[0]!.toFixed(1)})\n`)
  printTable(
    ['client side of one token request', 'CPU µs', 'spread', 'wall µs', 'x floor (CPU)'],
    rows.map((row) => [row.name, us(median(row.cpu)), spread(row.cpu, us), us(median(row.wall)), (median(row.cpu) / floor).toFixed(2)]),
  )
}

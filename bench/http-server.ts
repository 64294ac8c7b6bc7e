/**
 * One app of the HTTP bench in a process of its own, so the load generator (bench/http.ts) never
 * shares its event loop: `node --import tsx bench/http-server.ts <scenario>`, or its bundle in
 * .bench/ under `npm run bench` (bench/run.mjs). bench/http-apps.ts lists the scenarios;
 * BENCH_SESSIONS sets how many database or Passport sessions to create.
 *
 * Started by bench/http.ts with an IPC channel: it answers `{ port }` once listening on loopback (or
 * `{ skipped }`), `{ cpuMicros }` (user + system CPU so far) to `'cpu'`, and closes on `'stop'` or
 * when its parent goes away.
 */
import type { AddressInfo } from 'node:net'
import { createBenchApp, SCENARIOS, type Scenario } from './http-apps.js'
import { HOST } from './http-sessions.js'

export type ServerMessage = { port: number } | { skipped: string } | { cpuMicros: number }

const scenario = process.argv[2] as Scenario
if (!SCENARIOS.includes(scenario)) throw new TypeError(`usage: http-server.ts <${SCENARIOS.join('|')}>`)
if (!process.send) throw new Error('http-server.ts is started by bench/http.ts (it reports its port over IPC)')
const send = (message: ServerMessage) => process.send!(message)

const built = await createBenchApp(scenario, { sessions: Number(process.env.BENCH_SESSIONS ?? 10_000) })
if ('skipped' in built) {
  send(built)
  process.disconnect()
} else {
  const server = built.app.listen(0, HOST, () => send({ port: (server.address() as AddressInfo).port }))
  const stop = () => {
    server.closeAllConnections()
    server.close(() => void built.close().then(() => process.exit(0)))
  }
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage()
      send({ cpuMicros: user + system })
    } else if (message === 'stop') stop()
  })
  process.on('disconnect', stop)
}

/**
 * The HTTP bench's Portcullis app alone (bench/http-portcullis-app.ts), for bench/instructions.ts:
 * `node --import tsx bench/instructions-server.ts <port>` prints `ready` once listening on loopback,
 * and serves until it is stopped. `bench/instructions-server.ts <scenario> <sessions> <port>` serves the
 * HTTP bench's app of that scenario instead (bench/http-apps.ts: `bearer`, `api-key-cached`), its
 * `sessions` grants or keys seeded first.
 */
import { createBenchApp, type Scenario } from './http-apps.js'
import { HOST } from './http-sessions.js'
import { portcullisBenchApp } from './http-portcullis-app.js'

const [scenario, sessions, port] = process.argv.length > 3 ? [process.argv[2] as Scenario, Number(process.argv[3]), Number(process.argv[4])] : [undefined, 0, Number(process.argv[2])]
const built = scenario ? await createBenchApp(scenario, { sessions }) : { app: portcullisBenchApp() }
if ('skipped' in built) throw new Error(`instructions-server.ts ${scenario}: ${built.skipped}`)
built.app.listen(port, HOST, () => console.log('ready'))

/**
 * The HTTP bench's Portcullis app alone (bench/http-portcullis-app.ts), for bench/instructions.ts:
 * `node --import tsx bench/instructions-server.ts <port> <requests>` prints `ready` once listening
 * on loopback and exits once it has answered `requests` requests.
 */
import { HOST } from './http-sessions.js'
import { portcullisBenchApp } from './http-portcullis-app.js'

const [port, requests] = process.argv.slice(2).map(Number) as [number, number]
let answered = 0
const server = portcullisBenchApp().listen(port, HOST, () => console.log('ready'))
server.on('request', (_req, res) => res.on('finish', () => ++answered === requests && process.exit(0)))

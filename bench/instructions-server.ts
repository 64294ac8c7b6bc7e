/**
 * The HTTP bench's Portcullis app alone (bench/http-portcullis-app.ts), for bench/instructions.ts:
 * `node --import tsx bench/instructions-server.ts <port>` prints `ready` once listening on loopback,
 * and serves until it is stopped.
 */
import { HOST } from './http-sessions.js'
import { portcullisBenchApp } from './http-portcullis-app.js'

const port = Number(process.argv[2])
portcullisBenchApp().listen(port, HOST, () => console.log('ready'))

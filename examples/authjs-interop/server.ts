/**
 * Runs the example: `npx tsx examples/authjs-interop/server.ts`. The front end's Auth.js on
 * FRONTEND_PORT (default 3000) and the Express API on API_PORT (default 3001), both on localhost:
 * browsers send a host's cookies to all its ports, so the two share the session cookie here as
 * they would under one site in production.
 *
 * Both need the same AUTH_SECRET; without one, this development script makes one per start.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createApi } from './api.js'
import { createFrontend } from './frontend.js'

const secret = process.env.AUTH_SECRET ?? randomBytes(33).toString('base64')
const host = process.env.HOST ?? 'localhost'
const frontendPort = Number(process.env.FRONTEND_PORT ?? 3000)
const apiPort = Number(process.env.API_PORT ?? 3001)

const frontend = createFrontend(secret).listen(frontendPort, host)
const api = createApi(secret).listen(apiPort, host)
await Promise.all([once(frontend, 'listening'), once(api, 'listening')])
console.log(`Front end (Auth.js) running at http://localhost:${frontendPort} (sign in: /api/auth/signin, ada / lovelace)`)
console.log(`API (Portcullis) running at http://localhost:${apiPort} (/api/me; sign in: /api/auth/signin)`)

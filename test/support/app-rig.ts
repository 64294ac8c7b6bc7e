/**
 * The app rig of the HTTP suites: Portcullis's handlers at /api/auth and `GET /me` answering
 * `await auth(req, res)` on an Express app (5, or 4 where a suite asks), and, for suites that need a
 * real socket, that app listening on 127.0.0.1 at an ephemeral port. Every listening server is closed
 * by `closeAll()`; a suite registers it once with `afterAll(closeAll)`.
 */
import { recordingLogger } from './logger.js'
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Portcullis, { type PortcullisConfig, type PortcullisResult } from 'portcullis'

/** An Express factory: `express` (5) by default, `express4` where a suite runs both. */
export type ExpressFactory = () => express.Express

/** Portcullis and the Express app it is mounted on. */
export type AuthApp = { app: express.Express } & PortcullisResult

/**
 * Portcullis of `config` at /api/auth and `GET /me` answering the session as JSON. The caller
 * supplies the secret and providers; a suite may add routes and middleware after these two.
 */
export function authApp(config: PortcullisConfig, createExpress: ExpressFactory = express): AuthApp {
  // Log lines are recorded, and printed only for a test that fails (test/support/environment.cjs).
  const portcullis = Portcullis({ logger: recordingLogger(), ...config })
  const app = createExpress()
  app.use('/api/auth', portcullis.handlers)
  app.get('/me', async (req, res) => {
    res.json(await portcullis.auth(req, res))
  })
  return { app, ...portcullis }
}

const servers = new Set<Server>()

/** `app` listening on 127.0.0.1 at an ephemeral port (with Node's `serverOptions`, e.g. `maxHeaderSize`). */
export async function listenApp(app: RequestListener, serverOptions: ServerOptions = {}): Promise<{ server: Server; origin: string }> {
  const server = createServer(serverOptions, app)
  // Idle keep-alive connections stay open until closeServer: a client reusing one just as the server's
  // timeout closed it fails with ECONNRESET (see listenLocal in browser-rig.ts, and oauth-app.ts).
  server.keepAliveTimeout = 0
  servers.add(server)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** Closes every server `listenApp` started. */
export async function closeAll(): Promise<void> {
  await Promise.all([...servers].map(closeServer))
}

/** Closes one server `listenApp` started, with every connection it has. */
export async function closeServer(server: Server): Promise<void> {
  servers.delete(server)
  server.closeAllConnections()
  if (server.listening) await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
}

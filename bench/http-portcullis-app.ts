/**
 * The Portcullis app of the HTTP benches and its reference routes, apart from the other libraries'
 * apps (bench/http-apps.ts) so that a server needing only this one loads nothing else: the
 * instruction count (bench/instructions.ts) runs it under valgrind, where every module loaded
 * costs seconds.
 */
import { randomUUID } from 'node:crypto'
import { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import express, { type Express, type RequestHandler } from 'express'
import type { PortcullisConfig } from '../src/index.js'
// The floor formats `expires` with Portcullis's own function, which dist/ does not export.
import { isoDate } from '../src/session/iso-date.js'
import { floorDecryptFor } from './floor.js'
import { benchUser, HOST, MAX_AGE, SECRET, SESSION_COOKIE } from './http-sessions.js'
import { ensureBuilt } from './settings.js'

// Portcullis as an app installs it: the built dist/ (typed from src/, which it is built from).
ensureBuilt()
export const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href

/** The two modules of a build of Portcullis the bench app uses. */
export interface PortcullisBuild {
  Portcullis: typeof import('../src/index.js').default
  Credentials: typeof import('../src/providers/credentials.js').default
}

/** Those modules of the build in the folder at `url` (a `file:` URL ending in `/`). */
export async function loadBuild(url: string | URL): Promise<PortcullisBuild> {
  const [index, credentials] = await Promise.all([import(new URL('index.js', url).href), import(new URL('providers/credentials.js', url).href)])
  return { Portcullis: (index as typeof import('../src/index.js')).default, Credentials: (credentials as typeof import('../src/providers/credentials.js')).default }
}

/** dist/, the build every bench measures (bench/ab.ts sets another beside it). */
const distBuild = await loadBuild(dist(''))

/**
 * What `/plain` answers: a session-shaped body of the same size, read from nowhere. The JWT rows'
 * cookies carry a random UUID as `sub` (bench/http-sessions.ts), so the id is one too: with the
 * user's own id the body was 30 bytes shorter than `/me`'s.
 */
const plainSession = (() => {
  const { name, email, image } = benchUser(0)
  return { user: { id: randomUUID(), name, email, image }, expires: new Date(Date.now() + MAX_AGE * 1000).toISOString() }
})()

const floorDecrypt = floorDecryptFor(SECRET, SESSION_COOKIE)

/** The reference routes' handlers by path: `/plain` (the ceiling), `/plain-async` and `/floor`. */
const referenceHandlers: Record<string, RequestHandler> = {
  '/plain': (_req, res) => {
    res.json(plainSession)
  },
  // The same body sent after an `await` of a settled promise, as `GET /me` sends the session after
  // `await auth(req, res)`: what a route's `await` costs (Node's stream and HTTP bookkeeping for a
  // response sent from a microtask), apart from the read.
  '/plain-async': async (_req, res) => {
    const body = await Promise.resolve(plainSession)
    res.json(body)
  },
  // The floor (bench/floor.ts) inline: the cookie's value after `name=`, decrypted, no checks. Its
  // `expires` is formatted as `/me`'s is, by Portcullis's isoDate: with `Date#toISOString` (V8
  // formats through vsnprintf) the floor cost 5,000 instructions a request more than with it on
  // Node 24 (bench/instructions.ts), a difference between the rows that is not the read's.
  '/floor': (req, res) => {
    const cookie = req.headers.cookie ?? ''
    const claims = floorDecrypt(cookie.slice(cookie.indexOf('=') + 1)) as { sub: string; name: string; email: string; picture: string; exp: number }
    res.json({ user: { id: claims.sub, name: claims.name, email: claims.email, image: claims.picture }, expires: isoDate(claims.exp * 1000) })
  },
}

/** The reference routes as an app's own routes, one `app.get` each (the other libraries' apps, bench/http-apps.ts). */
export function referenceRoutes(app: Express): Express {
  for (const [path, handler] of Object.entries(referenceHandlers)) app.get(path, handler)
  return app
}

/**
 * Portcullis as its README shows it: the auth routes mounted, `await auth(req, res)` in `GET /me`,
 * and the reference routes. `/me` and the reference routes are one Express route (`/:route`, the
 * handler looked up by path), so that every row passes the same layers and the rows differ by the
 * session read alone: Express tries an app's routes in turn, and each route tried before the one
 * that answers costs the request about 670 instructions on Node 24 (bench/instructions.ts), so with
 * a route each `/me`, registered after the three, paid about 2,000 more than `/plain`.
 * `extraRoutes` go on that route too (bench/steady-split-server.ts's parts of `/me`; the organization
 * scenario's `/project`, built from the instance).
 */
export function portcullisBenchApp(
  config: Pick<PortcullisConfig, 'adapter' | 'session' | 'apiKeys' | 'authorizationServer' | 'organizations'> = {},
  { Portcullis, Credentials }: PortcullisBuild = distBuild,
  extraRoutes: Record<string, RequestHandler> | ((portcullis: ReturnType<PortcullisBuild['Portcullis']>) => Record<string, RequestHandler>) = {},
): Express {
  const portcullis = Portcullis({ secret: SECRET, trustHost: true, ...config, providers: [Credentials({ authorize: () => null })] })
  const { handlers, auth } = portcullis
  const app = express()
  app.use('/api/auth', handlers)
  const extra = typeof extraRoutes === 'function' ? extraRoutes(portcullis) : extraRoutes
  const routes = new Map<string, RequestHandler>(Object.entries({ ...referenceHandlers, ...extra }))
  routes.set('/me', async (req, res) => {
    const current = await auth(req, res)
    if (!current) {
      res.status(401).json({ message: 'Not authenticated' })
      return
    }
    res.json(current)
  })
  app.get('/:route', (req, res, next) => {
    const route = routes.get(req.path)
    if (route) return route(req, res, next)
    next()
  })
  return app
}

/**
 * A GET request for `path` carrying `cookie`, made as Node's HTTP server makes one, and its response,
 * for driving an app in process (`app(req, res)`): no socket is read or written.
 */
export function pipelineRequest(socket: Socket, path: string, cookie: string): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(socket)
  req.method = 'GET'
  req.url = path
  req.httpVersion = '1.1'
  req.httpVersionMajor = 1
  req.httpVersionMinor = 1
  req.headers = { host: `${HOST}:3000`, connection: 'keep-alive', cookie }
  return { req, res: new ServerResponse(req) }
}

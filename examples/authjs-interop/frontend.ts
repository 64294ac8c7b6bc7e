/**
 * Stands in for the Next.js front end: the real Auth.js (`@auth/core`) answering `/api/auth/*`,
 * as a Next.js app's `app/api/auth/[...nextauth]/route.ts` does with `export const { GET, POST } =
 * handlers`. Next.js hands Auth.js a web `Request` and sends back its `Response`; this does the
 * same on a plain node:http server, so the example runs without Next.js.
 *
 * The Auth.js configuration is what a Next.js app would have in `auth.ts` (see README.md): JWT
 * sessions (Auth.js's default without an adapter) sealed with AUTH_SECRET.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import { Auth, type AuthConfig } from '@auth/core'
import Credentials from '@auth/core/providers/credentials'
import { verifyPassword } from './users.js'

/** The front end's Auth.js configuration; `logger` replaces Auth.js's console logger. */
export function frontendAuthConfig(secret: string, logger?: AuthConfig['logger']): AuthConfig {
  return {
    secret,
    ...(logger ? { logger } : {}),
    basePath: '/api/auth',
    // The development server's own Host; in production set AUTH_URL instead.
    trustHost: true,
    session: { strategy: 'jwt' },
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) => verifyPassword(username, password),
      }),
    ],
  }
}

/**
 * The front end: Auth.js on `/api/auth/*`, and a home page that reads the session the way a server
 * component calls `auth()`.
 */
export function createFrontend(secret: string): Server {
  return createServer(frontendListener(secret))
}

/** The front end's request listener, for a server of your own (the tests add routes around it). */
export function frontendListener(secret: string, logger?: AuthConfig['logger']): RequestListener {
  const config = frontendAuthConfig(secret, logger)
  return async (req, res) => {
    try {
      const request = await toWebRequest(req)
      const url = new URL(request.url)
      if (url.pathname.startsWith('/api/auth/')) return await sendWebResponse(res, await Auth(request, config))
      if (url.pathname === '/') {
        const session = await readSession(request, config)
        res.setHeader('Content-Type', 'text/plain; charset=utf-8')
        res.end(session?.user ? `Front end (Auth.js): signed in as ${session.user.name} <${session.user.email}>\n` : 'Front end (Auth.js): not signed in\n')
        return
      }
      res.statusCode = 404
      res.end('Not found\n')
    } catch (error) {
      console.error(error)
      res.statusCode = 500
      res.end('Internal error\n')
    }
  }
}

/** What Next.js's `auth()` does on the server: ask Auth.js's session route with the request's cookies. */
async function readSession(request: Request, config: AuthConfig): Promise<{ user?: { name?: string | null; email?: string | null } } | null> {
  const sessionUrl = new URL('/api/auth/session', request.url)
  const response = await Auth(new Request(sessionUrl, { headers: { cookie: request.headers.get('cookie') ?? '' } }), config)
  return (await response.json()) as { user?: { name?: string; email?: string } } | null
}

async function toWebRequest(req: IncomingMessage): Promise<Request> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else if (value !== undefined) headers.set(name, value)
  }
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const method = req.method ?? 'GET'
  const init: RequestInit = method === 'GET' || method === 'HEAD' ? { method, headers } : { method, headers, body: Buffer.concat(chunks) }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, init)
}

async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value)
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) res.setHeader('Set-Cookie', cookies)
  res.end(Buffer.from(await response.arrayBuffer()))
}

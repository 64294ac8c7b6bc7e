/**
 * The `auth` middleware lets the auth routes and the configured pages through without asking
 * `callbacks.authorized` (or a protected app could never sign in). That exemption must be decided on
 * the path exactly as Express and Connect route it: a URL parser resolves `/dashboard/%2e%2e/api/auth`
 * to `/api/auth` while the router serves it under `/dashboard`. Raw requests over node:http, since
 * fetch and supertest normalise such paths before sending.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import connect from 'connect'
import express from 'express'
import express4 from 'express4'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import Portcullis, { type PortcullisConfig } from 'portcullis'
import { SECRET, credentialsProvider } from '../support/flow.js'
import { close, listen, rawRequest } from '../support/raw-http.js'

const silent = { error: () => {}, warn: () => {}, debug: () => {} }
const config: PortcullisConfig = {
  secret: SECRET,
  providers: [credentialsProvider],
  trustHost: true,
  logger: silent,
  pages: { signIn: '/login' },
  callbacks: { authorized: ({ auth }) => !!auth },
}

type Handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void
const secret: Handler = (_req, res) => void res.end('secret')
const page = (body: string): Handler => (_req, res) => void res.end(body)

/**
 * `app.use('/dashboard', auth)` with a catch-all under it, and `app.use(auth)` at the root protecting
 * /admin, on Express 5 or 4 (whose catch-all paths are spelled `*splat` and `*`).
 */
function expressApps(createExpress: typeof express, wildcard: string): { mounted: Server; root: Server } {
  const mounted = createExpress()
  const one = Portcullis(config)
  mounted.use('/api/auth', one.handlers)
  mounted.use('/dashboard', one.auth)
  mounted.get(`/dashboard/${wildcard}`, secret)
  const root = createExpress()
  const two = Portcullis(config)
  root.use(two.auth)
  root.use('/api/auth', two.handlers)
  root.get('/login', page('login form'))
  root.get(`/admin/${wildcard}`, secret)
  root.get(`/${wildcard}`, secret)
  return { mounted: createServer(mounted), root: createServer(root) }
}

const apps: Record<string, () => { mounted: Server; root: Server }> = {
  'Express 5': () => expressApps(express, '*splat'),
  'Express 4': () => expressApps(express4, '*'),
  Connect: () => {
    const mounted = connect()
    const one = Portcullis(config)
    mounted.use('/api/auth', one.handlers as never)
    mounted.use('/dashboard', one.auth as never)
    mounted.use('/dashboard', secret as never)
    const root = connect()
    const two = Portcullis(config)
    root.use(two.auth as never)
    root.use('/api/auth', two.handlers as never)
    root.use('/login', ((req, res, next) => (req.url?.split('?')[0] === '/' ? page('login form')(req, res, next) : next())) as Handler as never)
    root.use(secret as never)
    return { mounted: createServer(mounted), root: createServer(root) }
  },
}

// Spellings of a climb out of the protected prefix into an exempt path.
const mountedAttacks = [
  '/dashboard/%2e%2e/api/auth',
  '/dashboard/%2E%2E/api/auth',
  '/dashboard/.%2e/api/auth',
  '/dashboard/%2e./api/auth',
  '/dashboard/%2e%2E/api/auth/session',
  '/dashboard/../api/auth',
  '/dashboard/./%2e%2e/api/auth',
  '/dashboard/%2e%2e;x/api/auth',
  '/dashboard/..;/api/auth',
  '/dashboard//%2e%2e/api/auth',
  '/dashboard/%2e%2e/api/auth/',
  '/DASHBOARD/%2e%2e/API/AUTH',
  '/dashboard/%2e%2e/login',
]
const rootAttacks = [
  '/admin/%2e%2e/login',
  '/admin/%2E%2E/login',
  '/admin/.%2e/login',
  '/admin/%2e%2e/api/auth',
  '/admin/%2e%2e/api/auth/session',
  '/admin/../login',
  '/admin/%2e%2e;jsessionid=1/login',
  '//admin/%2e%2e/login',
  '/admin/%2e%2e/login/',
  '/admin/%2e%2e/LOGIN',
  '/login;x',
  '/LOGIN',
  '/login/',
  '//login',
  '/api/authx',
  '/API/AUTH/../admin/x',
]

describe.each(Object.keys(apps))('%s: the auth middleware', (name) => {
  let mounted: Server
  let root: Server
  beforeAll(async () => {
    const servers = apps[name]!()
    mounted = await listen(servers.mounted)
    root = await listen(servers.root)
  })
  afterAll(async () => {
    await close(mounted)
    await close(root)
  })

  it.each(mountedAttacks)('app.use("/dashboard", auth): %s never reaches the protected route', async (path) => {
    const response = await rawRequest(mounted, path)
    expect(response.body).not.toContain('secret')
    expect(response.status).toBe(302)
    expect(response.headers.location).toContain('/login?callbackUrl=')
  })

  it.each(rootAttacks)('app.use(auth): %s never reaches a protected route', async (path) => {
    const response = await rawRequest(root, path)
    expect(response.body).not.toContain('secret')
    expect(response.status).toBe(302)
    expect(response.headers.location).toContain('/login?callbackUrl=')
  })

  it('still lets the auth routes and the sign-in page through, spelled as configured', async () => {
    expect(await rawRequest(root, '/login')).toMatchObject({ status: 200, body: 'login form' })
    expect(await rawRequest(root, '/login?callbackUrl=%2Fadmin%2Fx')).toMatchObject({ status: 200, body: 'login form' })
    expect(await rawRequest(root, '/api/auth/session')).toMatchObject({ status: 200, body: 'null' })
    expect(await rawRequest(mounted, '/api/auth/session')).toMatchObject({ status: 200, body: 'null' })
    // A protected path without a session is refused; the control for the attacks above.
    expect((await rawRequest(root, '/admin/x')).status).toBe(302)
    expect((await rawRequest(mounted, '/dashboard/x')).status).toBe(302)
  })
})

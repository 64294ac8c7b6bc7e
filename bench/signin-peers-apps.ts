/**
 * The apps of bench/signin-peers.ts, each an Express app on a port of its own, `node
 * signin-peers-apps.js oidc` the OIDC ones in one process and `… email` the e-mail ones in another:
 * nothing else runs in either (the identity provider and the test browser are other processes), so
 * a process's CPU time over a round is the sign-ins' cost to its apps: the libraries, Express,
 * node:http and the outgoing requests to the provider.
 *
 * The e-mail apps have a process of their own because two Auth.js instances cannot share one:
 * @auth/core's assertConfig keeps "a provider of type email was seen" in a module-level flag
 * (`hasEmail` in lib/utils/assert.js, 0.41.3) that it never resets, so once the e-mail instance has
 * answered, the OIDC instance, which has no adapter, answers every request with MissingAdapter.
 *
 * oidc process:
 *   portcullis             Portcullis (dist/), OIDC provider as bench/signin.ts builds it, JWT session
 *   portcullis-id-token    the same with `userinfo: false`: the profile from the ID token alone, as
 *                          the two others take it (the provider puts every claim there)
 *   authjs                 @auth/express, an `oidc` provider on the same issuer, JWT session
 *   passport               Passport 0.7, openid-client's Passport strategy, express-session's MemoryStore
 * email process:
 *   portcullis-email       Portcullis's Email provider, Knex adapter on SQLite in memory, JWT session
 *   portcullis-email-memory  the same on Auth.js's row's in-memory adapter (bench/authjs-memory-adapter.ts)
 *   authjs-email           @auth/express's Nodemailer provider, an in-memory adapter, JWT session
 *
 * The e-mail providers do not mail: `sendVerificationRequest` keeps the link, and the bench asks for
 * the links over IPC. IPC: sends `{ urls, redirectUris }` (by app) once listening; receives `{ issuer, clients }` (the e-mail process ignores them) and answers
 * `{ ready: true }` once every app is built; then answers `{ id, type: 'cpu' }` with `{ id, cpu }`
 * (`process.cpuUsage()`, all threads, µs), `{ id, type: 'links', app }` with `{ id, links }` (the links
 * mailed since the last ask), and exits on `{ type: 'close' }`.
 */
import { once } from 'node:events'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import knex from 'knex'

const OIDC_APPS = ['portcullis', 'portcullis-id-token', 'authjs', 'passport'] as const
const EMAIL_APPS = ['portcullis-email', 'portcullis-email-memory', 'authjs-email'] as const
type OidcAppName = (typeof OIDC_APPS)[number]
type AppName = OidcAppName | (typeof EMAIL_APPS)[number]
const kind = process.argv[2]
if (kind !== 'oidc' && kind !== 'email') throw new TypeError('usage: signin-peers-apps <oidc|email>')
const APPS: readonly AppName[] = kind === 'oidc' ? OIDC_APPS : EMAIL_APPS
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
/** Each OIDC app's redirect URI, under its origin. */
const CALLBACK_PATH: Record<OidcAppName, string> = {
  portcullis: '/api/auth/callback/corp',
  'portcullis-id-token': '/api/auth/callback/corp',
  authjs: '/auth/callback/corp',
  passport: '/callback/corp',
}
interface Client {
  client_id: string
  client_secret: string
}
// Generous sign-in limits for the e-mail rows: the defaults (10 attempts per address in 15 minutes)
// would refuse the bench's hundreds of link requests for one address. The limiter still runs.
const RATE_LIMIT = { ip: { attempts: 1e9, windowSeconds: 900 }, identifier: { attempts: 1e9, windowSeconds: 900 } }

// Portcullis as an app installs it, the built dist/ (bench/signin-peers.ts builds it first).
const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href
const portcullis = async () => ((await import(dist('index.js'))) as typeof import('../src/index.js')).default

const send = (message: unknown) => process.send!(message)
// The bench gone (stopped, or failed), so is this process.
process.on('disconnect', () => process.exit(0))
const listeners = await Promise.all(APPS.map(() => listen()))
const urls = Object.fromEntries(APPS.map((name, i) => [name, listeners[i]!.url])) as Record<AppName, string>
const redirectUris = kind === 'oidc' ? Object.fromEntries(OIDC_APPS.map((name) => [name, urls[name] + CALLBACK_PATH[name]])) : {}
send({ urls, redirectUris })
const [{ issuer, clients }] = (await once(process, 'message')) as [{ issuer: string; clients: Record<OidcAppName, Client> }]

const links: Record<string, string[]> = { 'portcullis-email': [], 'portcullis-email-memory': [], 'authjs-email': [] }
const keep = (app: string) => ({ url }: { url: string }) => void links[app]!.push(url)
const routes: Partial<Record<AppName, RequestListener>> =
  kind === 'oidc'
    ? {
        portcullis: await portcullisOidc(issuer, clients.portcullis, true),
        'portcullis-id-token': await portcullisOidc(issuer, clients['portcullis-id-token'], false),
        authjs: await authjsOidc(issuer, clients.authjs),
        passport: await passportOidc(issuer, clients.passport, urls.passport),
      }
    : {
        'portcullis-email': await portcullisEmail(keep('portcullis-email'), 'sqlite'),
        'portcullis-email-memory': await portcullisEmail(keep('portcullis-email-memory'), 'memory'),
        'authjs-email': await authjsEmail(keep('authjs-email')),
      }
APPS.forEach((name, i) => listeners[i]!.mount(routes[name]!))
process.on('message', (message: { id: number; type: string; app?: string }) => {
  if (message.type === 'cpu') send({ id: message.id, cpu: process.cpuUsage() })
  else if (message.type === 'links') send({ id: message.id, links: links[message.app!]!.splice(0) })
  else if (message.type === 'close') process.exit(0)
})
send({ ready: true })

/** Portcullis with the OIDC provider of bench/signin.ts, JWT session; `userinfo` off: the ID token's claims alone. */
async function portcullisOidc(issuer: string, client: Client, userinfo: boolean): Promise<RequestListener> {
  const [Portcullis, { default: OIDC }] = await Promise.all([portcullis(), import(dist('providers/oidc.js')) as Promise<typeof import('../src/providers/oidc.js')>])
  const corp = OIDC({ id: 'corp', name: 'Corp', issuer, clientId: client.client_id, clientSecret: client.client_secret, dangerouslyAllowInsecureRequests: true, ...(userinfo ? {} : { userinfo: false }) })
  const { handlers } = Portcullis({ secret: SECRET, trustHost: true, providers: [corp] })
  // GET /plain: a bare Express answer, what any request costs this process before a library's work.
  return express()
    .get('/plain', (_req, res) => void res.send('ok'))
    .use('/api/auth', handlers)
}

/**
 * Portcullis's Email provider, JWT session, on its Knex adapter (SQLite in memory) or on the in-memory
 * adapter of the Auth.js row (Auth.js's adapter interface is Portcullis's): like for like with it.
 */
async function portcullisEmail(sendVerificationRequest: (params: { url: string }) => void, store: 'sqlite' | 'memory'): Promise<RequestListener> {
  const [Portcullis, { default: Email }, { KnexAdapter, migrationSource }, { memoryAdapter }] = await Promise.all([
    portcullis(),
    import(dist('providers/email.js')) as Promise<typeof import('../src/providers/email.js')>,
    import(dist('adapters/knex/index.js')) as Promise<typeof import('../src/adapters/knex/index.js')>,
    import('./authjs-memory-adapter.js'),
  ])
  let adapter: Parameters<typeof Portcullis>[0]['adapter']
  if (store === 'memory') adapter = memoryAdapter() as typeof adapter
  else {
    const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    adapter = KnexAdapter(db)
  }
  const { handlers } = Portcullis({
    secret: SECRET,
    trustHost: true,
    adapter,
    session: { strategy: 'jwt' },
    rateLimit: RATE_LIMIT,
    providers: [Email({ sendVerificationRequest })],
  })
  return express().use('/api/auth', handlers)
}

/**
 * @auth/express behind `trust proxy` as bench/http-apps.ts's, mounted on `/auth`: its README's
 * `app.use('/auth/*', …)` in Express 5's syntax (`/auth/*splat`, what bench/http-apps.ts uses only for
 * `getSession`) breaks its routes, since ExpressAuth takes its base path from `req.params[0]`, which
 * Express 5 leaves unset there (every route then answers UnknownAction); on `/auth` the base path comes
 * out as `/auth`.
 */
async function authjsApp(config: import('@auth/express').ExpressAuthConfig): Promise<RequestListener> {
  const { ExpressAuth } = await import('@auth/express')
  const app = express()
  app.set('trust proxy', true)
  app.use('/auth', ExpressAuth(config))
  return app
}

/** @auth/express with an `oidc` provider on the issuer (discovered by Auth.js at each sign-in, as it does), JWT session. */
async function authjsOidc(issuer: string, client: Client): Promise<RequestListener> {
  return authjsApp({ secret: SECRET, trustHost: true, providers: [{ id: 'corp', name: 'Corp', type: 'oidc', issuer, clientId: client.client_id, clientSecret: client.client_secret }] })
}

/** @auth/express's Nodemailer provider (its link kept instead of mailed) on the in-memory adapter, JWT session. */
async function authjsEmail(sendVerificationRequest: (params: { url: string }) => void): Promise<RequestListener> {
  const [{ default: Nodemailer }, { memoryAdapter }] = await Promise.all([import('@auth/core/providers/nodemailer'), import('./authjs-memory-adapter.js')])
  return authjsApp({
    secret: SECRET,
    trustHost: true,
    adapter: memoryAdapter(),
    session: { strategy: 'jwt' },
    providers: [Nodemailer({ server: 'smtp://127.0.0.1:1', from: 'bench@example.test', sendVerificationRequest })],
  })
}

/**
 * Passport with openid-client's strategy, as openid-client's Passport example sets it up: the issuer
 * discovered once at start, express-session (MemoryStore, not resaved, no empty sessions) holding the
 * strategy's state and then the user's id, which `passport.session()` deserialises from a `Map`.
 */
async function passportOidc(issuer: string, client: Client, origin: string): Promise<RequestListener> {
  const [{ default: session }, { default: passport }, openid, { Strategy }] = await Promise.all([
    import('express-session'),
    import('passport'),
    import('openid-client'),
    import('openid-client/passport'),
  ])
  const config = await openid.discovery(new URL(issuer), client.client_id, client.client_secret, undefined, { execute: [openid.allowInsecureRequests] })
  interface User {
    id: string
    name: unknown
    email: unknown
  }
  const users = new Map<string, User>()
  const authenticator = new passport.Passport()
  authenticator.use(
    'corp',
    new Strategy({ config, scope: 'openid profile email', callbackURL: `${origin}${CALLBACK_PATH.passport}` }, (tokens, verified) => {
      const claims = tokens.claims()!
      const user = { id: claims.sub, name: claims.name, email: claims.email }
      users.set(user.id, user)
      verified(null, user)
    }),
  )
  authenticator.serializeUser((user, done) => done(null, (user as User).id))
  authenticator.deserializeUser((id: string, done) => done(null, users.get(id) ?? false))

  const app = express()
  app.use(session({ secret: SECRET, store: new session.MemoryStore(), resave: false, saveUninitialized: false, cookie: { httpOnly: true, sameSite: 'lax' } }))
  app.use(authenticator.initialize())
  app.use(authenticator.session())
  app.get('/login/corp', authenticator.authenticate('corp'))
  app.get(CALLBACK_PATH.passport, authenticator.authenticate('corp', { successRedirect: '/home', failureRedirect: '/failed' }))
  app.get('/me', (req, res) => void (req.user ? res.json({ user: req.user }) : res.status(401).json({ message: 'Not authenticated' })))
  return app
}

/** A server listening before its app exists, so the provider can register the exact redirect URI. */
async function listen() {
  let routes: RequestListener = (_req, res) => void res.writeHead(503).end()
  const server = createServer((req, res) => routes(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, mount: (next: RequestListener) => void (routes = next) }
}

/**
 * The Express apps the HTTP bench (bench/http.ts, through bench/http-server.ts) and the memory
 * bench (bench/memory.ts) measure, one per way of reading a session. Each is set up the way its
 * README shows, with its sign-in routes mounted, and answers `GET /me` with the session as JSON
 * (401 without one). Every app also has `GET /plain`, which reads no session: the ceiling, and
 * `GET /floor`, which decrypts the session cookie inline with nothing else (bench/floor.ts): the
 * ceiling of any library that reads a cookie it has not seen before.
 *
 *   jwt                Portcullis, JWT sessions (`await auth(req, res)`), the default 1,000-token cache
 *   jwt-store          the same with `session.store` (revocable sessions): a Knex table on in-memory
 *                      SQLite holding the sessions, each checked at most every 5 s
 *   database-sqlite    Portcullis, database sessions: KnexAdapter on better-sqlite3 (in memory)
 *   database-postgres  the same on PostgreSQL (PG_URL, default postgres://postgres@127.0.0.1:5432/test)
 *   api-key            Portcullis with `apiKeys`, read from the Authorization header: one key per
 *                      user in a KnexAdapter table on better-sqlite3 (in memory), no opened-key cache
 *                      (one indexed lookup per request), no per-key rate limit
 *   api-key-cached     the same with the opened-key cache (`cacheSeconds: 3600`, room for every key)
 *   api-key-raw        the same tables and keys, no Portcullis: a route hashing the header's key and
 *                      running the adapter's indexed lookup and join by hand (the floor of a key read)
 *   bearer             Portcullis with `authorizationServer`, reading access tokens it issued from the
 *                      Authorization header (JWTs verified in process once, each grant checked once for the
 *                      run: `grantCheckSeconds: 3600`): one grant per user in the OAuthRecord table on
 *                      better-sqlite3 (in memory)
 *   organization       Portcullis JWT with `organizations`: the tokens carry an active organization, and
 *                      `/project` is `/me` behind `requirePermission({ project: ['create'] })`
 *   authjs             @auth/express: `ExpressAuth` mounted, `await getSession(req, config)` in the route
 *   passport           Passport (passport-local) over express-session's MemoryStore, the user
 *                      deserialised by id from an in-memory map
 *   better-auth        better-auth 1.x on Express as its guide shows (bench/better-auth.ts), SQLite in
 *                      memory; better-auth-cached the same with its cookie cache
 *
 * The sessions exist before the first request (bench/http-sessions.ts says which): database rows
 * through the adapter, Passport sessions written into the MemoryStore as express-session stores them.
 *
 * Each app imports the libraries it needs when it is built, so that a server process loads only its
 * own: the HTTP bench starts 21 at once, 12 of them `jwt` (on 2026-11-28, a `jwt` server started in
 * 0.8-1.0 s instead of 1.2-1.3 s, and all 21 in 21 s instead of 27).
 */
import { createHash } from 'node:crypto'
import express, { type Express } from 'express'
import type { Knex } from 'knex'
import type { SessionData } from 'express-session'
import { dist, portcullisBenchApp, referenceRoutes } from './http-portcullis-app.js'
import { seedSessions } from './seed.js'
import { displayOf } from '../src/features/api-keys/format.js'
import { API_KEY_PREFIX, BEARER_CLIENT, BEARER_SITE, benchApiKey, benchUser, databaseSessionToken, MAX_AGE, passportSessionId, SECRET, storeSessionId, type BenchUser } from './http-sessions.js'

type KnexAdapterModule = typeof import('../src/adapters/knex/index.js')

export const SCENARIOS = ['jwt', 'jwt-store', 'database-sqlite', 'database-postgres', 'api-key', 'api-key-cached', 'api-key-raw', 'bearer', 'organization', 'authjs', 'passport', 'better-auth', 'better-auth-cached'] as const
export type Scenario = (typeof SCENARIOS)[number]

export interface BenchApp {
  app: Express
  close: () => Promise<void>
}

/** Why an app could not be built (PostgreSQL not reachable): the bench prints it and skips the row. */
export interface SkippedApp {
  skipped: string
}

export interface BenchAppOptions {
  /** How many database or Passport sessions to create (users 0 … sessions - 1). */
  sessions: number
}

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pgDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).href

export async function createBenchApp(scenario: Scenario, options: BenchAppOptions): Promise<BenchApp | SkippedApp> {
  switch (scenario) {
    case 'jwt':
      return portcullisApp()
    case 'jwt-store':
      return storeApp(options)
    case 'database-sqlite':
      return databaseApp(await sqlite(), options)
    case 'database-postgres': {
      const db = await postgres()
      return 'skipped' in db ? db : databaseApp(db, options)
    }
    case 'api-key':
      return apiKeyApp(await sqlite(), options, 0)
    case 'api-key-cached':
      return apiKeyApp(await sqlite(), options, 3600)
    case 'api-key-raw':
      return rawKeyApp(await sqlite(), options)
    case 'bearer':
      return bearerApp(await sqlite(), options)
    case 'organization':
      return organizationApp(await sqlite())
    case 'authjs':
      return authjsApp()
    case 'passport':
      return passportApp(options)
    case 'better-auth':
      return betterAuthApp(options, false)
    case 'better-auth-cached':
      return betterAuthApp(options, true)
  }
}

/** The `jwt` app, with an adapter or a session store. */
function portcullisApp(adapter?: ReturnType<KnexAdapterModule['KnexAdapter']>, store?: Knex): BenchApp {
  const session = store ? { strategy: 'jwt' as const, store: { knex: store } } : undefined
  return { app: portcullisBenchApp({ adapter, session }), close: async () => {} }
}

/** JWT sessions with `session.store`: the store's table holds a record for each session's `sid`. */
async function storeApp({ sessions }: BenchAppOptions): Promise<BenchApp> {
  const db = await sqlite()
  const now = Date.now()
  const { app } = portcullisApp(undefined, db)
  // The store creates its table on first use; the records go in once it exists.
  await db.schema.createTable('portcullis_session_store', (table) => {
    table.string('key', 255).primary()
    table.string('userId', 255).nullable().index()
    table.bigInteger('createdAt').nullable()
    table.bigInteger('lastSeenAt').nullable()
    table.bigInteger('expires').notNullable().index()
    table.string('ipAddress', 64).nullable()
    table.string('userAgent', 512).nullable()
    table.text('value').nullable()
  })
  const rows = Array.from({ length: sessions }, (_, i) => ({
    key: `s:${storeSessionId(i)}`,
    userId: benchUser(i).id,
    createdAt: now,
    lastSeenAt: now,
    expires: now + MAX_AGE * 1000,
    ipAddress: '127.0.0.1',
    userAgent: 'autocannon',
  }))
  for (let i = 0; i < rows.length; i += 500) await db('portcullis_session_store').insert(rows.slice(i, i + 500))
  return { app, close: () => db.destroy() }
}

/** The `api-key` app: Portcullis's `auth(req)` reads the key (one indexed lookup and join, or the cache). */
async function apiKeyApp(db: Knex, options: BenchAppOptions, cacheSeconds: number): Promise<BenchApp> {
  const { KnexAdapter } = await seedApiKeys(db, options)
  const app = portcullisBenchApp({ adapter: KnexAdapter(db), apiKeys: { rateLimit: false, cacheSeconds, cacheSize: options.sessions } })
  return { app, close: () => db.destroy() }
}

/**
 * The `bearer` app: Portcullis's `auth(req)` reads the access token (signature, claims, then the grant,
 * from the process's grant cache after its first lookup). Users `0 … sessions - 1`, each with grant `grant-i`
 * of client bench-cli, as the authorization server stores a grant; the tokens are bench/http-sessions.ts's.
 */
async function bearerApp(db: Knex, { sessions }: BenchAppOptions): Promise<BenchApp> {
  const { KnexAdapter, migrationSource } = (await import(dist('adapters/knex/index.js'))) as KnexAdapterModule
  await db.migrate.latest({ migrationSource: migrationSource() })
  const now = Math.floor(Date.now() / 1000)
  for (let i = 0; i < sessions; i += 400) {
    const batch = Array.from({ length: Math.min(400, sessions - i) }, (_, j) => i + j)
    await db('User').insert(batch.map((n) => ({ id: benchUser(n).id, name: benchUser(n).name, email: benchUser(n).email, image: benchUser(n).image })))
    await db('OAuthRecord').insert(
      batch.map((n) => ({ model: 'Grant', id: `grant-${n}`, payload: JSON.stringify({ accountId: benchUser(n).id, clientId: BEARER_CLIENT, openid: { scope: 'openid' }, resources: { [`${BEARER_SITE}/`]: 'reports:read' }, iat: now, jti: `grant-${n}`, kind: 'Grant' }), accountId: benchUser(n).id, clientId: BEARER_CLIENT })),
    )
  }
  // The issuer (and so the tokens' iss and aud) is fixed by AUTH_URL, read at init.
  process.env.AUTH_URL = `${BEARER_SITE}/api/auth`
  // The grants are checked once each (the first request) for the whole run, as the API keys' cached row opens each key
  // once: the row times the token read, not a stream of grant lookups that a few rounds over 5,000 tokens would make.
  const app = portcullisBenchApp({ adapter: KnexAdapter(db), authorizationServer: { scopes: ['reports:read'], grantCheckSeconds: 3600 } })
  delete process.env.AUTH_URL
  return { app, close: () => db.destroy() }
}

/**
 * JWT sessions with the `organizations` option: each cookie's token carries an active organization
 * (bench/http-sessions.ts's organizationSessionCookies), and `/project` is `/me` behind
 * `requirePermission({ project: ['create'] })`, which the role there grants: the permission check on a
 * warm read, no query (the tables exist, empty: nothing reads them).
 */
async function organizationApp(db: Knex): Promise<BenchApp> {
  const { KnexAdapter, migrationSource } = (await import(dist('adapters/knex/index.js'))) as KnexAdapterModule
  await db.migrate.latest({ migrationSource: migrationSource() })
  const app = portcullisBenchApp({ adapter: KnexAdapter(db), session: { strategy: 'jwt' }, organizations: { statements: { project: ['create'] }, roles: { member: { project: ['create'] } }, sendMail: () => {} } }, undefined, ({ requirePermission }) => {
    const guard = requirePermission({ project: ['create'] })
    return { '/project': (req, res, next) => void guard(req, res, () => res.json((req as { auth?: unknown }).auth)).catch(next) }
  })
  return { app, close: () => db.destroy() }
}

/**
 * The floor of a key read over HTTP: the same tables and keys, and a route that hashes the header's
 * key and runs the indexed lookup and join the adapter runs, written by hand, answering the user as
 * JSON. It decides as any correct key read must, and no more: the key's expiry and revocation, its
 * owner gone (the account's deletion mark) or banned, from the columns those need; no format or
 * checksum check, no constant-time compare, no rate limit or quota, no cache, no `req.auth`. It writes
 * the key's last use at most once a minute, as the issue asks of a key read and Portcullis does (not
 * awaited, only when the row's is older): without it, the rounds that fall a minute after the keys'
 * last use timed Portcullis's writes against a floor that wrote nothing. (Until 2026-12-04 it
 * selected 8 columns and checked none of those: a floor no correct read can stand on.)
 */
async function rawKeyApp(db: Knex, options: BenchAppOptions): Promise<BenchApp> {
  await seedApiKeys(db, options)
  const app = referenceRoutes(express())
  app.get('/me', async (req, res) => {
    const key = req.headers.authorization?.replace(/^Bearer /, '') ?? ''
    const row = (await db('ApiKey as k')
      .join('User as u', 'u.id', 'k.ownerId')
      .where('k.keyHash', createHash('sha256').update(key).digest('hex'))
      .andWhere('k.ownerType', 'user')
      .whereNull('u.deletedAt')
      .first('k.id', 'k.name', 'k.scopes', 'k.lastUsedAt', 'k.expiresAt', 'k.revokedAt', 'u.id as uid', 'u.name as uname', 'u.email as uemail', 'u.image as uimage', 'u.bannedAt as ubannedAt', 'u.banExpiresAt as ubanExpiresAt')) as Record<string, string | number | null> | undefined
    const now = Date.now()
    const until = (value: string | number | null | undefined) => (value === null || value === undefined ? undefined : new Date(value).getTime())
    const banEnds = until(row?.ubanExpiresAt) ?? Infinity
    if (!row || row.revokedAt !== null || (until(row.expiresAt) ?? Infinity) <= now || (row.ubannedAt !== null && banEnds > now)) return void res.status(401).json({ message: 'Not authenticated' })
    if (now - until(row.lastUsedAt)! >= 60_000) {
      const before = new Date(now - 60_000)
      void db('ApiKey')
        .where('id', row.id!)
        .andWhere((q) => q.whereNull('lastUsedAt').orWhere('lastUsedAt', '<', before))
        .update({ lastUsedAt: new Date(now) })
        .catch(() => {})
    }
    res.json({ user: { id: row.uid, name: row.uname, email: row.uemail, image: row.uimage }, key: { id: row.id, name: row.name, scopes: JSON.parse(String(row.scopes)) as string[] } })
  })
  return { app, close: () => db.destroy() }
}

/**
 * Users `0 … sessions - 1`, each owning API key `i` (bench/http-sessions.ts), stored as createApiKey()
 * stores one, each last used just now: the steady state of keys in use, whose `lastUsedAt` is written
 * at most once a minute. Unused keys would have every row's first requests write it (a few rounds
 * barely use each of thousands of keys twice), and the rows would time those writes, not the read.
 */
async function seedApiKeys(db: Knex, { sessions }: BenchAppOptions): Promise<KnexAdapterModule> {
  const adapterModule = (await import(dist('adapters/knex/index.js'))) as KnexAdapterModule
  await db.migrate.latest({ migrationSource: adapterModule.migrationSource() })
  const createdAt = new Date()
  for (let i = 0; i < sessions; i += 400) {
    const batch = Array.from({ length: Math.min(400, sessions - i) }, (_, j) => i + j)
    await db('User').insert(batch.map((n) => ({ id: benchUser(n).id, name: benchUser(n).name, email: benchUser(n).email, image: benchUser(n).image })))
    await db('ApiKey').insert(
      batch.map((n) => {
        const key = benchApiKey(n)
        return { id: `key-${n}`, keyHash: createHash('sha256').update(key).digest('hex'), display: displayOf(key, API_KEY_PREFIX), name: `key ${n}`, ownerType: 'user', ownerId: benchUser(n).id, scopes: '["reports:read"]', createdAt, lastUsedAt: createdAt }
      }),
    )
  }
  return adapterModule
}

async function databaseApp(db: Knex, { sessions }: BenchAppOptions): Promise<BenchApp> {
  const { KnexAdapter, migrationSource } = (await import(dist('adapters/knex/index.js'))) as KnexAdapterModule
  await db.migrate.latest({ migrationSource: migrationSource() })
  const expires = new Date(Date.now() + MAX_AGE * 1000)
  await seedSessions(db, KnexAdapter, sessions, expires, (i) => {
    const { name, email, image } = benchUser(i)
    return { user: { name, email, image, emailVerified: null }, sessionToken: databaseSessionToken(i) }
  })
  const { app } = portcullisApp(KnexAdapter(db))
  return { app, close: () => db.destroy() }
}

/** An in-memory SQLite database. */
async function sqlite(): Promise<Knex> {
  const { default: knex } = await import('knex')
  return knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
}

/** A scratch database of the bench's own, created afresh; skipped with the reason when unreachable. */
async function postgres(): Promise<Knex | SkippedApp> {
  const { default: knex } = await import('knex')
  const admin = knex({ client: 'pg', connection: pgDatabase('postgres'), pool: { min: 0, max: 1 }, acquireConnectionTimeout: 2000 })
  try {
    await admin.raw('drop database if exists portcullis_bench_http')
    await admin.raw('create database portcullis_bench_http')
  } catch (error) {
    return { skipped: `PostgreSQL not reachable at ${new URL(PG_URL).host} (${(error as Error).message})` }
  } finally {
    await admin.destroy()
  }
  return knex({ client: 'pg', connection: pgDatabase('portcullis_bench_http') })
}

/** @auth/express as its docs show it: `ExpressAuth` on the /auth routes, `getSession` in the route. */
async function authjsApp(): Promise<BenchApp> {
  const [{ ExpressAuth, getSession }, { default: CredentialsAuthjs }] = await Promise.all([import('@auth/express'), import('@auth/core/providers/credentials')])
  const config = { secret: SECRET, trustHost: true, providers: [CredentialsAuthjs({ authorize: () => null })] }
  const app = referenceRoutes(express())
  app.set('trust proxy', true)
  // Its README's `app.use('/auth/*', …)` in Express 5 syntax; /auth is Auth.js's default basePath.
  app.use('/auth/*splat', ExpressAuth(config))
  app.get('/me', async (req, res) => {
    const current = await getSession(req, config)
    if (!current) {
      res.status(401).json({ message: 'Not authenticated' })
      return
    }
    res.json(current)
  })
  return { app, close: async () => {} }
}

/**
 * better-auth as its Express guide shows it: its handler on `/api/auth/*splat`, `auth.api.getSession`
 * with the request's headers in the route, on SQLite in memory (bench/better-auth.ts seeds its
 * sessions). With its cookie cache the browser holds the `session_data` cookie its client gets from
 * `GET /api/auth/get-session` (bench/http.ts asks for it for every cookie before the clock starts).
 */
async function betterAuthApp({ sessions }: BenchAppOptions, cached: boolean): Promise<BenchApp> {
  const [{ betterAuthSessions }, { toNodeHandler, fromNodeHeaders }] = await Promise.all([import('./better-auth.js'), import('better-auth/node')])
  const seeded = await betterAuthSessions(SECRET, sessions)
  const auth = cached ? seeded.cached : seeded.plain
  const app = referenceRoutes(express())
  app.all('/api/auth/*splat', toNodeHandler(auth))
  app.get('/me', async (req, res) => {
    const current = await auth.api.getSession({ headers: fromNodeHeaders(req.headers) })
    if (!current) return void res.status(401).json({ message: 'Not authenticated' })
    res.json(current)
  })
  return { app, close: async () => seeded.close() }
}

/**
 * Passport's usual setup: express-session (MemoryStore, not resaved, 30-day cookie), then
 * `passport.session()`, which deserialises `req.session.passport.user` into `req.user`.
 */
async function passportApp({ sessions }: BenchAppOptions): Promise<BenchApp> {
  const [{ default: session }, { default: passport }, { Strategy: LocalStrategy }] = await Promise.all([import('express-session'), import('passport'), import('passport-local')])
  const users = new Map<string, BenchUser>()
  const store = new session.MemoryStore()
  const expires = new Date(Date.now() + MAX_AGE * 1000).toISOString()
  for (let i = 0; i < sessions; i++) {
    const user = benchUser(i)
    users.set(user.id, user)
    // What express-session stores after `req.login(user)`: the cookie's settings and Passport's key.
    const data = { cookie: { originalMaxAge: MAX_AGE * 1000, expires, httpOnly: true, path: '/', sameSite: 'lax' }, passport: { user: user.id } }
    store.set(passportSessionId(i), data as unknown as SessionData)
  }

  const authenticator = new passport.Passport()
  authenticator.use(new LocalStrategy((username, _password, done) => done(null, [...users.values()].find((user) => user.name === username) ?? false)))
  authenticator.serializeUser((user, done) => done(null, (user as BenchUser).id))
  authenticator.deserializeUser((id: string, done) => done(null, users.get(id) ?? false))

  const app = referenceRoutes(express())
  app.use(session({ secret: SECRET, store, resave: false, saveUninitialized: false, cookie: { maxAge: MAX_AGE * 1000, httpOnly: true, sameSite: 'lax' } }))
  app.use(authenticator.initialize())
  app.use(authenticator.session())
  app.post('/login', express.urlencoded({ extended: false }), authenticator.authenticate('local', { successRedirect: '/me', failureRedirect: '/login' }))
  app.get('/me', (req, res) => {
    if (!req.user) {
      res.status(401).json({ message: 'Not authenticated' })
      return
    }
    res.json({ user: req.user, expires: req.session.cookie.expires })
  })
  return { app, close: async () => {} }
}

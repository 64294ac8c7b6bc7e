/**
 * Traps a new app falls into with the `auth` middleware: a protected sign-in page that redirects
 * to itself, Auth.js's JSON client told 200 for a refusal, and a database outage on Express 4,
 * where an unhandled rejection ends the process.
 */
import express from 'express'
import express4 from 'express4'
import knex from 'knex'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import Portcullis, { type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { SECRET, credentialsProvider, fetchCsrfToken } from '../support/flow.js'

const silent = { error: () => {}, warn: () => {}, debug: () => {} }
const signedIn: NonNullable<PortcullisConfig['callbacks']>['authorized'] = ({ auth }) => !!auth

describe('app.use(auth) protecting the whole app', () => {
  function wholeApp(pages: PortcullisConfig['pages']) {
    const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], logger: silent, pages, callbacks: { authorized: signedIn } })
    const app = express()
    app.use(auth)
    app.use('/api/auth', handlers)
    app.get('/login', (_req, res) => void res.send('login form'))
    app.get('/bye', (_req, res) => void res.send('signed out'))
    app.get('/dashboard', (_req, res) => void res.send('secret'))
    return app
  }

  it('lets the configured sign-in page through instead of redirecting it to itself', async () => {
    const app = wholeApp({ signIn: '/login', signOut: '/bye' })
    expect((await request(app).get('/login?callbackUrl=%2Fdashboard').expect(200)).text).toBe('login form')
    expect((await request(app).get('/bye').expect(200)).text).toBe('signed out')
    expect((await request(app).get('/dashboard').expect(302)).headers.location).toMatch(/\/login\?callbackUrl=%2Fdashboard$/)
  })

  it('lets the auth routes through, so a protected app can still sign in', async () => {
    const app = wholeApp({})
    const agent = request.agent(app)
    expect((await agent.get('/api/auth/signin').expect(200)).text).toContain('Sign in')
    const csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'lovelace' }).expect(302)
    expect((await agent.get('/dashboard').expect(200)).text).toBe('secret')
  })
})

describe('Auth.js’s JSON client (X-Auth-Return-Redirect: 1)', () => {
  it('gets 401 with the sign-in URL from the middleware, not a 200', async () => {
    const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], logger: silent, callbacks: { authorized: signedIn } })
    const app = express()
    app.use('/api/auth', handlers)
    app.use('/dashboard', auth, (_req, res) => void res.send('secret'))
    const response = await request(app).get('/dashboard').set('X-Auth-Return-Redirect', '1').expect(401)
    expect(response.body).toEqual({
      error: 'SessionRequired',
      message: expect.any(String),
      signInUrl: expect.stringMatching(/\/api\/auth\/signin\?callbackUrl=%2Fdashboard$/),
      url: expect.stringMatching(/\/api\/auth\/signin\?callbackUrl=%2Fdashboard$/),
    })
  })
})

describe('a database outage', () => {
  let dir: string
  beforeAll(async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    dir = await mkdtemp(`${tmpdir()}/portcullis-outage-`)
  })
  afterAll(async () => {
    const { rm } = await import('node:fs/promises')
    await rm(dir, { recursive: true, force: true })
  })

  it.each([
    ['Express 4', express4 as unknown as () => express.Express],
    ['Express 5', express],
  ])('answers 500 through the app’s error handler on %s, and the process goes on', async (_name, createExpress) => {
    const db = knex({ client: 'better-sqlite3', connection: { filename: `${dir}/${_name.replace(' ', '')}.sqlite` }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const adapter = KnexAdapter(db)
    const user = await adapter.createUser({ name: 'Ada', email: 'ada@example.com', emailVerified: null })
    const { handlers, auth } = Portcullis({
      secret: SECRET,
      adapter,
      logger: silent,
      providers: [Credentials({ authorize: () => adapter.getUser(user.id) })],
      callbacks: { authorized: signedIn },
    })
    const app = createExpress()
    app.use('/api/auth', handlers)
    app.use('/dashboard', auth, (_req, res) => void res.send('secret'))
    app.get('/me', auth((req, res) => void res.json(req.auth)))
    app.get('/ok', (_req, res) => void res.send('ok'))
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ handled: error.name }))

    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken }).expect(302)
    expect((await agent.get('/dashboard').expect(200)).text).toBe('secret')

    await db.schema.renameTable('Session', 'SessionGone')
    expect((await agent.get('/dashboard').expect(500)).body).toEqual({ handled: 'AdapterError' })
    expect((await agent.get('/me').expect(500)).body).toEqual({ handled: 'AdapterError' })
    expect((await agent.get('/ok').expect(200)).text).toBe('ok')

    await db.schema.renameTable('SessionGone', 'Session')
    expect((await agent.get('/dashboard').expect(200)).text).toBe('secret')
    await db.destroy()
  })
})

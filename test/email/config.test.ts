/**
 * E-mail providers at init and the origin of their links: the errors that name what to set (adapter,
 * AUTH_EMAIL_SERVER / AUTH_EMAIL_FROM, AUTH_URL or trustHost), the environment read, the generic
 * provider's hooks, the server-side signIn(), and the rule that a link's origin never comes from a
 * Host header a client chose.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import express from 'express'
import request from 'supertest'
import knex, { type Knex } from 'knex'
import Portcullis, { InvalidConfigurationError, UntrustedHostError, type Adapter, type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Email, { type SendVerificationRequestParams } from 'portcullis/providers/email'
import Nodemailer from 'portcullis/providers/nodemailer'
import { isolateEnv } from '../support/env.js'
import { SECRET } from '../support/flow.js'
import { closeListeners, listen, sessionOf, silentLogger, type Listener } from '../support/oauth-app.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { Browser, FROM, paramsOf, recordingLogger, requestLink } from './email-app.js'

let db: Knex
let smtp: TestSmtpServer
let app: Listener

beforeAll(async () => {
  db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
  smtp = await startSmtpServer()
  app = await listen()
})
afterAll(async () => {
  await closeListeners()
  await smtp?.close()
  await db?.destroy()
})

isolateEnv(['AUTH_URL', 'AUTH_TRUST_HOST', 'AUTH_EMAIL_SERVER', 'AUTH_EMAIL_FROM', 'NODE_ENV', 'AUTH_SECRET'], ['NODE_ENV'])

const init = (config: Partial<PortcullisConfig>) => () => Portcullis({ secret: SECRET, logger: silentLogger, providers: [], ...config })

describe('init', () => {
  it('refuses an e-mail provider without an adapter, saying verification tokens need one', () => {
    const run = init({ providers: [Nodemailer({ server: smtp.url, from: FROM })] })
    expect(run).toThrow(InvalidConfigurationError)
    expect(run).toThrow(/E-mail sign-in \(provider "nodemailer"\) needs an adapter: its one-time tokens are stored in the database/)
  })

  it('refuses an adapter without the verification-token methods, naming them', () => {
    const { createVerificationToken: _c, useVerificationToken: _u, ...partial } = KnexAdapter(db)
    expect(init({ adapter: partial as Adapter, providers: [Nodemailer({ server: smtp.url, from: FROM })] })).toThrow(/needs the adapter's createVerificationToken, useVerificationToken/)
  })

  it('in production, refuses to run without AUTH_URL or trustHost, explaining the Host-header risk', () => {
    process.env.NODE_ENV = 'production'
    const run = init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: smtp.url, from: FROM })] })
    expect(run).toThrow(UntrustedHostError)
    expect(run).toThrow(/Set AUTH_URL .*or trustHost: true/)
    expect(run).toThrow(/Host header, which any client can set/)
    process.env.AUTH_URL = 'https://example.com/api/auth'
    expect(run).not.toThrow()
    delete process.env.AUTH_URL
    expect(init({ adapter: KnexAdapter(db), trustHost: true, providers: [Nodemailer({ server: smtp.url, from: FROM })] })).not.toThrow()
  })

  it('names AUTH_EMAIL_SERVER and AUTH_EMAIL_FROM when Nodemailer has no server or sender', () => {
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ from: FROM })] })).toThrow(/set AUTH_EMAIL_SERVER/)
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: smtp.url })] })).toThrow(/set AUTH_EMAIL_FROM/)
  })

  it('reads the server and the sender from AUTH_EMAIL_SERVER and AUTH_EMAIL_FROM; options win', async () => {
    process.env.AUTH_EMAIL_SERVER = smtp.url
    process.env.AUTH_EMAIL_FROM = 'From Env <env@example.test>'
    // Given bare, as `providers: [Nodemailer]`.
    const { handlers } = Portcullis({ secret: SECRET, logger: silentLogger, adapter: KnexAdapter(db), providers: [Nodemailer] })
    const server = express().use('/api/auth', handlers)
    app.mount(server)
    smtp.skipReceived()
    await requestLink(new Browser(), app.url, 'env@example.com')
    expect((await smtp.nextMessage()).from).toBe('env@example.test')
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: 'smtp://127.0.0.1:1', from: 'x@example.test' })] })).not.toThrow()
  })

  it("refuses server: 'console' in production (it only prints links)", () => {
    process.env.NODE_ENV = 'production'
    expect(init({ adapter: KnexAdapter(db), trustHost: true, providers: [Nodemailer({ server: 'console' })] })).toThrow(/server 'console' only prints sign-in links, for development/)
  })

  it('refuses the generic provider without sendVerificationRequest, and options of the wrong type', () => {
    expect(init({ adapter: KnexAdapter(db), providers: [Email({} as never)] })).toThrow(/has no sendVerificationRequest/)
    expect(init({ adapter: KnexAdapter(db), providers: [Email({ sendVerificationRequest: () => {}, maxAge: 0 })] })).toThrow(/maxAge must be a number of seconds above 0/)
    expect(init({ adapter: KnexAdapter(db), providers: [Email({ sendVerificationRequest: () => {}, normalizeIdentifier: 'x' as never })] })).toThrow(/normalizeIdentifier must be a function/)
  })

  it('refuses every maxAge that is not a number of seconds above 0, and takes one that is', () => {
    const withMaxAge = (maxAge: unknown) => init({ adapter: KnexAdapter(db), providers: [Email({ sendVerificationRequest: () => {}, maxAge: maxAge as number })] })
    for (const maxAge of [0, -1, Infinity, Number.NaN, '600']) expect(withMaxAge(maxAge)).toThrow(/maxAge must be a number of seconds above 0/)
    expect(withMaxAge(0.5)).not.toThrow()
  })

  it('treats an empty AUTH_EMAIL_SERVER or a blank sender as missing, and refuses a server of another type', () => {
    process.env.AUTH_EMAIL_SERVER = ''
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ from: FROM })] })).toThrow(/set AUTH_EMAIL_SERVER/)
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: smtp.url, from: '   ' })] })).toThrow(/set AUTH_EMAIL_FROM/)
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: 42 as never, from: FROM })] })).toThrow(/server must be an SMTP URL, nodemailer transport options, or 'console'; got number/)
    // The console transport needs no sender: it sends nothing.
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: 'console' })] })).not.toThrow()
  })

  it('refuses a null or empty server as missing, and takes nodemailer transport options (an object)', () => {
    for (const server of [null, '']) {
      expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: server as never, from: FROM })] })).toThrow(/^E-mail provider "nodemailer" has no SMTP server: set AUTH_EMAIL_SERVER/)
    }
    expect(init({ adapter: KnexAdapter(db), providers: [Nodemailer({ server: { host: '127.0.0.1', port: smtp.port, secure: false }, from: FROM })] })).not.toThrow()
  })

  it('names a provider "Email" when its name is missing, empty or not a string, and keeps a name it was given', async () => {
    const send = () => {}
    const { handlers } = Portcullis({
      secret: SECRET,
      logger: silentLogger,
      adapter: KnexAdapter(db),
      providers: [
        Email({ id: 'named', name: 'Magic link', sendVerificationRequest: send }),
        Email({ id: 'empty', name: '', sendVerificationRequest: send }),
        { id: 'bare', type: 'email', sendVerificationRequest: send } as never,
        Email({ id: 'numbered', name: 42 as never, sendVerificationRequest: send }),
      ],
    })
    const response = await request(express().use('/api/auth', handlers)).get('/api/auth/providers').expect(200)
    const names = Object.fromEntries(Object.entries(response.body as Record<string, { name: string }>).map(([id, { name }]) => [id, name]))
    expect(names).toEqual({ named: 'Magic link', empty: 'Email', bare: 'Email', numbered: 'Email' })
  })

  it('does not modify the provider object it was given', () => {
    const provider = Nodemailer({ server: smtp.url, from: FROM })
    const copy = { ...provider }
    init({ adapter: KnexAdapter(db), providers: [provider] })()
    expect(provider).toEqual(copy)
  })
})

describe('the generic Email provider', () => {
  it('calls sendVerificationRequest with identifier, url, expires, provider, token, theme and request, and uses the custom hooks', async () => {
    const sent: SendVerificationRequestParams[] = []
    const { handlers, auth } = Portcullis({
      secret: SECRET,
      logger: silentLogger,
      adapter: KnexAdapter(db),
      theme: { brandColor: '#123456' },
      providers: [
        Email({
          id: 'magic',
          maxAge: 300,
          generateVerificationToken: () => 'custom-token-0123456789abcdef',
          normalizeIdentifier: (identifier) => `${identifier.trim().toLowerCase()}`,
          sendVerificationRequest: (params) => void sent.push(params),
        }),
      ],
    })
    const server = express()
    server.use('/api/auth', handlers)
    server.get('/me', async (req, res) => void res.json(await auth(req, res)))
    app.mount(server)
    const browser = new Browser()
    const before = Date.now()
    const response = await requestLink(browser, app.url, ' Mixed@Example.com', { providerId: 'magic' })
    expect(response.headers.get('location')).toBe(`${app.url}/api/auth/verify-request?provider=magic&type=email`)
    expect(sent).toHaveLength(1)
    const params = sent[0]!
    expect(params).toMatchObject({ identifier: 'mixed@example.com', token: 'custom-token-0123456789abcdef', theme: { brandColor: '#123456' } })
    expect(params.provider).toMatchObject({ id: 'magic', type: 'email', maxAge: 300 })
    expect(params.request.method).toBe('POST')
    expect(params.expires.getTime()).toBeGreaterThanOrEqual(before + 300_000)
    expect(params.url).toBe(`${app.url}/api/auth/callback/magic?callbackUrl=${encodeURIComponent(`${app.url}/`)}&token=custom-token-0123456789abcdef&email=mixed%40example.com`)
    await browser.request(params.url)
    expect((await sessionOf(browser, app.url))?.user.email).toBe('mixed@example.com')
  })

  it('makes a link last 24 hours when maxAge is not given, as Auth.js does', async () => {
    const sent: SendVerificationRequestParams[] = []
    const { handlers } = Portcullis({
      secret: SECRET,
      logger: silentLogger,
      adapter: KnexAdapter(db),
      providers: [Email({ sendVerificationRequest: (params) => void sent.push(params) })],
    })
    app.mount(express().use('/api/auth', handlers))
    const before = Date.now()
    await requestLink(new Browser(), app.url, 'day@example.com', { providerId: 'email' })
    const after = Date.now()
    expect(sent[0]!.provider.maxAge).toBe(24 * 60 * 60)
    expect(sent[0]!.expires.getTime()).toBeGreaterThanOrEqual(before + 86_400_000)
    expect(sent[0]!.expires.getTime()).toBeLessThanOrEqual(after + 86_400_000)
  })
})

describe('server-side signIn(id, { email })', () => {
  it('mails the link and answers with the verify-request page', async () => {
    const portcullis = Portcullis({ secret: SECRET, logger: silentLogger, adapter: KnexAdapter(db), providers: [Nodemailer({ server: smtp.url, from: FROM })] })
    const server = express()
    server.use('/api/auth', portcullis.handlers)
    server.post('/join', express.urlencoded({ extended: false }), portcullis.auth(async (req, res) => {
      const url = await portcullis.signIn('nodemailer', { email: (req.body as { email: string }).email, redirect: false, redirectTo: '/welcome' })
      res.json({ url })
    }))
    app.mount(server)
    smtp.skipReceived()
    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const response = await browser.request(`${app.url}/join`, { body: new URLSearchParams({ csrfToken, email: 'server@example.com' }) })
    expect(await response.json()).toEqual({ url: `${app.url}/api/auth/verify-request?provider=nodemailer&type=email` })
    const link = linkOf(await smtp.nextMessage())
    expect(paramsOf(link)).toMatchObject({ email: 'server@example.com', callbackUrl: `${app.url}/welcome` })
  })
})

describe("the link's origin", () => {
  /** A sign-in request whose Host header is `host` (supertest: fetch does not let a caller set Host). */
  async function requestWithHost(config: Partial<PortcullisConfig>, host: string) {
    const { logger, lines } = recordingLogger()
    const { handlers } = Portcullis({ secret: SECRET, logger, adapter: KnexAdapter(db), providers: [Nodemailer({ server: smtp.url, from: FROM })], ...config })
    const agent = request.agent(express().use('/api/auth', handlers))
    smtp.skipReceived()
    const sent = smtp.messages.length
    const csrf = await agent.get('/api/auth/csrf').set('Host', host)
    const response = await agent.post('/api/auth/signin/nodemailer').set('Host', host).type('form').send({ csrfToken: csrf.body.csrfToken, email: 'ada@example.com' })
    return { response, lines, mailed: smtp.messages.length > sent }
  }

  it('without AUTH_URL or trustHost, is refused for a Host that is not loopback (development): no e-mail', async () => {
    const { response, lines, mailed } = await requestWithHost({}, 'evil.example')
    expect(response.status).toBe(500)
    expect(mailed).toBe(false)
    expect(lines.error.join('\n')).toMatch(/E-mail sign-in: the site's origin \(http:\/\/evil\.example\) came from the request's Host header/)
  })

  it('without them, works on a loopback host in development (localhost, 127.0.0.1)', async () => {
    const { response, mailed } = await requestWithHost({}, 'localhost:3000')
    expect(response.status).toBe(302)
    expect(mailed).toBe(true)
    expect(linkOf(smtp.messages.at(-1)!).startsWith('http://localhost:3000/api/auth/callback/nodemailer?')).toBe(true)
    expect((await requestWithHost({}, '127.0.0.1:3000')).mailed).toBe(true)
    expect((await requestWithHost({}, '[::1]:3000')).mailed).toBe(true)
  })

  it('comes from AUTH_URL whatever the Host header says', async () => {
    process.env.AUTH_URL = 'https://auth.example.com/api/auth'
    // Plain cookies: the test client speaks http.
    const { response, mailed } = await requestWithHost({ useSecureCookies: false }, 'evil.example')
    expect(new URL(response.headers.location!).origin).toBe('https://auth.example.com')
    expect(mailed).toBe(true)
    const link = linkOf(smtp.messages.at(-1)!)
    expect(link.startsWith('https://auth.example.com/api/auth/callback/nodemailer?')).toBe(true)
    expect(smtp.messages.at(-1)!.parsed.subject).toBe('Sign in to auth.example.com')
  })
})

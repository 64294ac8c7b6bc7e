/**
 * Runs examples/express the way a visitor would, so the example cannot rot (STYLE.md, Tests).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Express } from 'express'
import type { Knex } from 'knex'
import request from 'supertest'
import { createApp } from '../../examples/express/app.js'
import type { DevIdp } from '../../examples/express/dev-idp.js'
import { Browser } from '../support/browser.js'
import { startQuietDevIdp } from '../support/dev-idp.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { recordingLogger } from '../support/logger.js'
import { startExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'
import { until } from '../support/time-limits.js'
import { Secret, TOTP } from 'otpauth'

let app: Express
let db: Knex
let adaId: string

beforeAll(async () => {
  process.env.AUTH_SECRET = 'test-secret-for-the-express-example-0123456789'
  ;({ app, db } = await createApp({ databaseFile: ':memory:', logger: recordingLogger() }))
  adaId = (await db('User').where({ email: 'ada@example.com' }).first()).id
})

afterAll(async () => {
  await db.destroy()
})

/** The path and query of an absolute `Location` header. */
function target(location: string | undefined): string {
  expect(location).toBeDefined()
  const url = new URL(location!)
  return url.pathname + url.search
}

function setCookies(response: request.Response): string[] {
  const header = response.headers['set-cookie'] as string[] | string | undefined
  return header === undefined ? [] : Array.isArray(header) ? header : [header]
}

/** An agent signed in as the demo user (or refused), following the form's real route. */
async function signIn(password: string, callbackUrl = '/dashboard', username = 'ada') {
  const agent = request.agent(app)
  const csrf = await agent.get('/api/auth/csrf').expect(200)
  const response = await agent
    .post('/api/auth/callback/credentials')
    .type('form')
    .send({ csrfToken: csrf.body.csrfToken, username, password, callbackUrl })
  return { agent, response, csrfToken: csrf.body.csrfToken as string }
}

describe('examples/express', () => {
  it('shows the home page signed out, with the demo credentials', async () => {
    const response = await request(app).get('/').expect(200)
    expect(response.text).toContain('You are not signed in.')
    expect(response.text).toContain('<code>ada</code>')
    expect(response.text).toContain('<code>lovelace</code>')
    expect(response.text).toContain('href="/api/auth/signin?callbackUrl=%2Fdashboard"')
  })

  it('redirects a signed-out visitor from /dashboard to the sign-in page with a callbackUrl', async () => {
    const response = await request(app).get('/dashboard').set('Accept', 'text/html').expect(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?callbackUrl=%2Fdashboard')
  })

  it('answers 401 JSON on /dashboard to a client that asks for JSON', async () => {
    const response = await request(app).get('/dashboard').set('Accept', 'application/json').expect(401)
    expect(response.body).toMatchObject({ error: 'SessionRequired', signInUrl: expect.stringContaining('/api/auth/signin?callbackUrl=%2Fdashboard') })
  })

  it('answers 401 JSON on /api/me when signed out', async () => {
    const response = await request(app).get('/api/me').expect(401)
    expect(response.body).toEqual({ message: 'Not authenticated' })
  })

  it('lists the username and password fields on the sign-in page, in the theme colour', async () => {
    const response = await request(app).get('/api/auth/signin?callbackUrl=%2Fdashboard').expect(200)
    expect(response.text).toMatch(/<input[^>]*type="text"[^>]*name="username"/)
    expect(response.text).toMatch(/<input[^>]*type="password"[^>]*name="password"/)
    expect(response.text).toContain('action="/api/auth/callback/credentials"')
    expect(response.text).toContain('#0f766e')
  })

  it('signs the demo user in and lands on the callbackUrl', async () => {
    const { agent, response } = await signIn('lovelace')
    expect(response.status).toBe(302)
    expect(target(response.headers.location)).toBe('/dashboard')
    // A database session: the cookie holds only the token of the new row.
    const token = /^authjs\.session-token=([0-9a-f]{64});/m.exec(setCookies(response).join('\n'))?.[1]
    expect(token).toBeDefined()
    expect(await db('Session').where({ sessionToken: token }).first()).toMatchObject({ userId: adaId })

    const dashboard = await agent.get('/dashboard').expect(200)
    expect(dashboard.text).toContain('Welcome, Ada Lovelace.')
    expect(dashboard.text).toContain(`<code>${adaId}</code>`)

    const me = await agent.get('/api/me').expect(200)
    expect(me.body).toMatchObject({ id: adaId, name: 'Ada Lovelace', email: 'ada@example.com' })

    const home = await agent.get('/').expect(200)
    expect(home.text).toContain('Signed in as <strong>Ada Lovelace</strong>')
  })

  it('has ada as its administrator, who impersonates grace from the built-in route and comes back', async () => {
    const { agent } = await signIn('lovelace')
    expect((await agent.get('/api/me').expect(200)).body).toMatchObject({ id: adaId, roles: ['admin'] })
    // The sign-in rotated the CSRF token.
    const csrfToken = (await agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
    expect((await agent.get('/dashboard').expect(200)).text).toContain('<a href="/api/auth/admin">Users (admin)</a>')
    const grace = await signIn('hopper', '/dashboard', 'grace')
    expect((await grace.agent.get('/dashboard').expect(200)).text).not.toContain('/api/auth/admin')
    const graceId = (await grace.agent.get('/api/me').expect(200)).body.id as string
    expect((await grace.agent.get('/api/me').expect(200)).body).toMatchObject({ name: 'Grace Hopper', roles: ['user'] })

    const started = await agent.post('/api/auth/admin/user/impersonate').type('form').send({ csrfToken, id: graceId, callbackUrl: '/dashboard' })
    expect([started.status, target(started.headers.location)]).toEqual([302, '/dashboard'])
    const dashboard = await agent.get('/dashboard').expect(200)
    expect(dashboard.text).toContain('Welcome, Grace Hopper.')
    expect(dashboard.text).toContain('An administrator is signed in as this user.')
    expect((await agent.get('/api/auth/account').expect(200)).text).toContain('by impersonation')

    const fresh = (await agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
    const stopped = await agent.post('/api/auth/admin/impersonation/stop').type('form').send({ csrfToken: fresh })
    expect(stopped.status).toBe(302)
    expect((await agent.get('/api/me').expect(200)).body).toMatchObject({ id: adaId })
    // Grace's own session never changed.
    expect((await grace.agent.get('/api/me').expect(200)).body).toMatchObject({ id: graceId })
  })

  it('makes an API key for the signed-in user, which a script with no cookie uses on /api/reports', async () => {
    const { agent } = await signIn('lovelace')
    expect((await agent.get('/dashboard').expect(200)).text).toContain('<a href="/api/auth/api-keys">Your API keys</a>')
    const { csrfToken } = (await agent.get('/api/auth/csrf').expect(200)).body as { csrfToken: string }
    const made = await agent.post('/api/auth/api-keys').set('accept', 'application/json').send({ csrfToken, name: 'Report job', scopes: ['reports:read'] }).expect(201)
    const key = (made.body as { key: string }).key
    await request(app).get('/api/reports').expect(401)
    const reports = await request(app).get('/api/reports').set('authorization', `Bearer ${key}`).expect(200)
    expect(reports.body).toMatchObject({ reports: [{ id: 1 }], for: adaId })
  })

  it('sends a wrong password back to the sign-in page with the CredentialsSignin code', async () => {
    const { agent, response } = await signIn('babbage')
    expect(response.status).toBe(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?error=CredentialsSignin&code=credentials')
    expect(setCookies(response).some((cookie) => cookie.startsWith('authjs.session-token='))).toBe(false)
    await agent.get('/api/me').expect(401)
  })

  it('refuses an unknown username the same way', async () => {
    const agent = request.agent(app)
    const csrf = await agent.get('/api/auth/csrf').expect(200)
    const response = await agent
      .post('/api/auth/callback/credentials')
      .type('form')
      .send({ csrfToken: csrf.body.csrfToken, username: 'charles', password: 'lovelace' })
      .expect(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?error=CredentialsSignin&code=credentials')
  })

  it('links the account page, which shows the signed-in user and the way to delete the account', async () => {
    const { agent } = await signIn('lovelace')
    expect((await agent.get('/').expect(200)).text).toContain('href="/api/auth/account"')
    const page = (await agent.get('/api/auth/account').expect(200)).text
    expect(page).toContain('<h1>Your account</h1>')
    expect(page).toContain('action="/api/auth/account/delete"')
    expect(page).toContain('href="/api/auth/sessions"')
  })

  it('links the sessions page, which lists this browser with its details', async () => {
    const { agent } = await signIn('lovelace')
    expect((await agent.get('/').expect(200)).text).toContain('href="/api/auth/sessions"')
    const page = await agent.set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0').get('/api/auth/sessions').expect(200)
    expect(page.text).toContain('(this device)')
    const { sessions } = (await agent.get('/api/auth/sessions/list').expect(200)).body as { sessions: Array<{ current: boolean; createdAt: string | null }> }
    // Earlier tests' sessions of the same user are listed too; this browser's is the one marked.
    expect(sessions.filter((session) => session.current)).toEqual([expect.objectContaining({ createdAt: expect.any(String) })])
  })

  it('turns on two-step verification from the dashboard: the next sign-in asks for a code (here a recovery code)', async () => {
    const { agent } = await signIn('lovelace')
    // A sign-in gives the browser a new CSRF token.
    const csrfToken = (await agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
    expect((await agent.get('/dashboard').expect(200)).text).toContain('href="/api/auth/two-factor/setup?callbackUrl=%2Fdashboard"')
    const setup = await agent.get('/api/auth/two-factor/setup').expect(200)
    expect(setup.text).toContain('<svg')
    const secret = /<code class="secret">([^<]+)<\/code>/.exec(setup.text)![1]!.replace(/\s/g, '')
    const on = await agent.post('/api/auth/two-factor/setup').type('form').send({ csrfToken, code: TOTP.generate({ secret: Secret.fromBase32(secret) }) }).expect(200)
    const recoveryCodes = [...on.text.matchAll(/<li>([a-z2-9]{5}-[a-z2-9]{5})<\/li>/g)].map((match) => match[1]!)
    expect(recoveryCodes).toHaveLength(10)

    const laptop = await signIn('lovelace')
    expect(target(laptop.response.headers.location)).toBe('/api/auth/two-factor')
    await laptop.agent.get('/api/me').expect(401)
    const second = await laptop.agent.post('/api/auth/two-factor').type('form').send({ csrfToken: laptop.csrfToken, code: recoveryCodes[0] }).expect(302)
    expect(target(second.headers.location)).toBe('/dashboard')
    expect((await laptop.agent.get('/api/me').expect(200)).body.email).toBe('ada@example.com')
    // Off again (with another recovery code), so the demo user signs in with the password alone.
    const fresh = (await laptop.agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
    await laptop.agent.post('/api/auth/two-factor/disable').type('form').send({ csrfToken: fresh, code: recoveryCodes[1] }).expect(302)
    expect(target((await signIn('lovelace')).response.headers.location)).toBe('/dashboard')
  })

  it('signs out, deletes the session row and clears the cookie', async () => {
    const { agent, response: signedIn } = await signIn('lovelace')
    await agent.get('/api/me').expect(200)
    const token = /^authjs\.session-token=([^;]+);/m.exec(setCookies(signedIn).join('\n'))![1]

    // The sign-in rotated the CSRF token: the sign-out form of the next page carries the new one.
    const { csrfToken } = (await agent.get('/api/auth/csrf').expect(200)).body as { csrfToken: string }
    const response = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/' }).expect(302)
    expect(target(response.headers.location)).toBe('/')
    const cleared = setCookies(response).find((cookie) => cookie.startsWith('authjs.session-token='))
    expect(cleared).toMatch(/^authjs\.session-token=;.*Max-Age=0/)

    expect(await db('Session').where({ sessionToken: token }).first()).toBeUndefined()
    await agent.get('/api/me').expect(401)
    const home = await agent.get('/').expect(200)
    expect(home.text).toContain('You are not signed in.')
    await agent.get('/dashboard').set('Accept', 'text/html').expect(302)
  })
})

describe('examples/express organizations', () => {
  /** A signed-in agent and the CSRF token its pages carry (the sign-in rotated it). */
  async function signedIn(username: string, password: string) {
    const { agent } = await signIn(password, '/dashboard', username)
    const csrfToken = (await agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
    return { agent, csrfToken }
  }

  it('answers 401 on the guarded /projects/new when signed out', async () => {
    expect((await request(app).get('/projects/new').expect(401)).body).toMatchObject({ error: 'SessionRequired' })
  })

  it('signs grace in with the demo organization active (her oldest membership), where a member is refused project: create', async () => {
    const { agent } = await signedIn('grace', 'hopper')
    const demo = await db('Organization').where({ slug: 'analytical-engines' }).first()
    expect((await agent.get('/api/me').expect(200)).body.activeOrganization).toEqual({ id: demo.id, roles: ['member'] })
    const page = await agent.get('/organization').expect(200)
    expect(page.text).toContain('Active organization: <strong>Analytical Engines</strong>, where your roles are <code>member</code>.')
    expect(page.text).toContain('href="/api/auth/organizations"')
    expect((await agent.get('/projects/new').expect(403)).body).toMatchObject({ error: 'Forbidden' })
  })

  it('lets ada, the demo organization\'s owner, open /projects/new', async () => {
    const { agent } = await signedIn('ada', 'lovelace')
    expect((await agent.get('/projects/new').expect(200)).text).toContain('You may create projects')
  })

  it('creates an organization from the page and switches to it: grace, its owner, may create projects there, and not after switching back', async () => {
    const { agent, csrfToken } = await signedIn('grace', 'hopper')
    // Without the form's CSRF token, nothing is created.
    await agent.post('/organization').type('form').send({ name: 'Hopper Labs' }).expect(403)
    expect(await db('Organization').where({ slug: 'hopper-labs' }).first()).toBeUndefined()

    const created = await agent.post('/organization').type('form').send({ name: 'Hopper Labs', csrfToken }).expect(303)
    expect(created.headers.location).toBe('/organization')
    const labs = await db('Organization').where({ slug: 'hopper-labs' }).first()
    expect((await agent.get('/api/me').expect(200)).body.activeOrganization).toEqual({ id: labs.id, roles: ['owner'] })
    expect((await agent.get('/organization').expect(200)).text).toContain('Active organization: <strong>Hopper Labs</strong>, where your roles are <code>owner</code>.')
    expect((await agent.get('/projects/new').expect(200)).text).toContain(`<code>${labs.id}</code>`)

    // The same name again: its slug is taken.
    expect((await agent.post('/organization').type('form').send({ name: 'Hopper Labs', csrfToken }).expect(409)).text).toContain('hopper-labs')

    const demo = await db('Organization').where({ slug: 'analytical-engines' }).first()
    await agent.post('/organization/active').type('form').send({ organizationId: demo.id, csrfToken }).expect(303)
    await agent.get('/projects/new').expect(403)
    // An organization she is not a member of is not found, and changes nothing.
    await agent.post('/organization/active').type('form').send({ organizationId: 'not-hers', csrfToken }).expect(404)
    expect((await agent.get('/api/me').expect(200)).body.activeOrganization).toEqual({ id: demo.id, roles: ['member'] })
  })
})

describe('examples/express e-mail sign-in', () => {
  // One listening server per app: the link holds the site's origin, port included, so asking for it
  // and following it must reach the same one (supertest would start a server per request).
  const servers: Server[] = []
  async function serve(site: Express): Promise<Server> {
    const server = createServer(site)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    servers.push(server)
    return server
  }
  afterAll(() => {
    for (const server of servers) {
      server.close()
      server.closeAllConnections()
    }
  })

  /** Asks for a link for `email` with the sign-in page's e-mail form; the agent keeps the cookies. */
  async function requestLink(site: Server, email: string) {
    const agent = request.agent(site)
    const page = await agent.get('/api/auth/signin?callbackUrl=%2Fdashboard').expect(200)
    expect(page.text).toContain('action="/api/auth/signin/nodemailer"')
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page.text)![1]
    const response = await agent.post('/api/auth/signin/nodemailer').type('form').send({ csrfToken, email, callbackUrl: '/dashboard' }).expect(302)
    expect(target(response.headers.location)).toBe('/api/auth/verify-request?provider=nodemailer&type=email')
    return agent
  }

  /**
   * Follows `link` (path and query) with a new agent, as another device would: the "Sign in as …?"
   * page, its button pressed; lands on the dashboard.
   */
  async function follow(site: Server, link: string) {
    const agent = request.agent(site)
    const url = new URL(link)
    const page = await agent.get(url.pathname + url.search).expect(200)
    expect(page.text).toContain(`Sign in as <strong>${url.searchParams.get('email')}</strong>?`)
    const fields = Object.fromEntries([...page.text.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map(([, name, value]) => [name!, value!.replaceAll('&amp;', '&').replaceAll('&#39;', "'").replaceAll('&quot;', '"')]))
    const response = await agent.post(url.pathname).type('form').send(fields).expect(302)
    expect(target(response.headers.location)).toBe('/dashboard')
    return agent
  }

  it('prints the link to the console by default (no mail server), and the link signs the demo user in', async () => {
    const site = await serve(app)
    const printed: string[] = []
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')))
    try {
      await requestLink(site, 'Ada@Example.com')
    } finally {
      log.mockRestore()
    }
    expect(printed).toHaveLength(1)
    expect(printed[0]).toContain("Development e-mail transport (server: 'console')")
    const link = /https?:\/\/\S+/.exec(printed[0]!)![0]
    const agent = await follow(site, link)
    const dashboard = await agent.get('/dashboard').expect(200)
    expect(dashboard.text).toContain('Welcome, Ada Lovelace.')
    expect(dashboard.text).toContain(`<code>${adaId}</code>`)
  })

  /** Runs `act` while catching console.log, until a printed mail (to `to`) appears; its link. */
  async function printedLink(to: string, act: () => Promise<unknown>): Promise<string> {
    const printed: string[] = []
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')))
    try {
      await act()
      // Password mails go out after the answer.
      await until(`a mail to ${to} printed`, () => printed.some((line) => line.includes(JSON.stringify(to))), 20)
    } finally {
      log.mockRestore()
    }
    const line = printed.find((each) => each.includes(JSON.stringify(to)))
    expect(line).toBeDefined()
    return /https?:\/\/\S+/.exec(line!)![0]
  }

  it('password accounts in npm start: sign up, verify by the link on the console, sign in, forget, reset; the old password is refused after', async () => {
    const site = await serve(app)
    const port = (site.address() as AddressInfo).port
    const origin = `http://127.0.0.1:${port}`
    const browser = new Browser()
    const form = async (path: string) => {
      const page = await browser.request(`${origin}${path}`)
      expect(page.status).toBe(200)
      return page
    }
    const signup = await form('/api/auth/signup?callbackUrl=%2Fdashboard')
    const verifyLink = await printedLink('lin@example.org', async () => {
      const response = await browser.submitForm(signup, { name: 'Lin', email: 'lin@example.org', password: 'a passphrase for the example' })
      expect(response.headers.get('location')).toBe(`${origin}/api/auth/verify-request?provider=password&type=signup`)
    })
    const verified = await browser.request(verifyLink)
    expect(verified.headers.get('location')).toBe(`${origin}/dashboard`)
    expect(await (await browser.request(`${origin}/dashboard`)).text()).toContain('Welcome, Lin.')

    const laptop = new Browser()
    const { csrfToken } = (await (await laptop.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const signedIn = await laptop.request(`${origin}/api/auth/callback/password`, { body: new URLSearchParams({ csrfToken, email: 'lin@example.org', password: 'a passphrase for the example', callbackUrl: '/dashboard' }) })
    expect(signedIn.headers.get('location')).toBe(`${origin}/dashboard`)

    const forgot = await form('/api/auth/forgot-password')
    const resetLink = await printedLink('lin@example.org', () => browser.submitForm(forgot, { email: 'lin@example.org' }))
    const reset = await browser.submitForm(await form(new URL(resetLink).pathname + new URL(resetLink).search), { password: 'a new passphrase for the example' })
    // Back where the sign-up was headed (the callback-URL cookie), signed in with the new password.
    expect(reset.headers.get('location')).toBe(`${origin}/dashboard`)
    expect(await (await browser.request(`${origin}/dashboard`)).text()).toContain('Welcome, Lin.')
    // The laptop's session ended with the reset; the old password no longer signs in.
    expect((await laptop.request(`${origin}/api/me`)).status).toBe(401)
    const fresh = ((await (await laptop.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
    const again = await laptop.request(`${origin}/api/auth/callback/password`, { body: new URLSearchParams({ csrfToken: fresh, email: 'lin@example.org', password: 'a passphrase for the example' }) })
    expect(new URL(again.headers.get('location')!).searchParams.get('error')).toBe('CredentialsSignin')
  })

  describe('with an SMTP server (AUTH_EMAIL_SERVER)', () => {
    let smtp: TestSmtpServer
    let mailApp: Server
    let mailDb: Knex

    beforeAll(async () => {
      smtp = await startSmtpServer()
      const created = await createApp({ databaseFile: ':memory:', emailServer: smtp.url, logger: recordingLogger() })
      mailDb = created.db
      mailApp = await serve(created.app)
    })
    afterAll(async () => {
      await mailDb?.destroy()
      await smtp?.close()
    })

    it('mails the link; following it signs up a new user, shown by e-mail address', async () => {
      await requestLink(mailApp, 'grace@example.org')
      const mail = await smtp.nextMessage()
      expect(mail.to).toEqual(['grace@example.org'])
      expect(mail.parsed.from?.text).toBe('"Portcullis example" <no-reply@localhost>')
      const agent = await follow(mailApp, linkOf(mail))
      const dashboard = await agent.get('/dashboard').expect(200)
      expect(dashboard.text).toContain('Welcome, grace@example.org.')
      expect(await mailDb('User').where({ email: 'grace@example.org' }).first()).toMatchObject({ email: 'grace@example.org' })
    })
  })
})

describe('examples/express with the local dev identity provider', () => {
  let server: Server
  let appOrigin: string
  let idp: DevIdp
  let oidcDb: Knex

  beforeAll(async () => {
    // The app listens before it exists, so that the callback URL registered at the IdP holds its
    // real port (Portcullis builds the redirect_uri from the request's Host).
    server = createServer()
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    appOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    idp = await startQuietDevIdp({ host: '127.0.0.1', clientRedirectUri: `${appOrigin}/api/auth/callback/dev-idp` })
    const created = await createApp({ databaseFile: ':memory:', devIdp: idp, logger: recordingLogger() })
    oidcDb = created.db
    server.on('request', created.app)
  })

  afterAll(async () => {
    server?.close()
    server?.closeAllConnections()
    await idp?.close()
    await oidcDb?.destroy()
  })

  /** Signs `login` in through the sign-in page's dev-idp form and the IdP's login page (no consent page). */
  async function signInWithDevIdp(browser: Browser, login: string): Promise<Response> {
    const csrf = (await (await browser.request(`${appOrigin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const start = await browser.request(`${appOrigin}/api/auth/signin/dev-idp`, {
      body: new URLSearchParams({ csrfToken: csrf.csrfToken, callbackUrl: `${appOrigin}/dashboard` }),
    })
    expect(start.status).toBe(302)
    const authorizationUrl = new URL(start.headers.get('location')!)
    expect(authorizationUrl.origin).toBe(idp.issuer)
    expect(authorizationUrl.searchParams.get('client_id')).toBe('portcullis-example')
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${appOrigin}/api/auth/callback/dev-idp`)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    // GET /auth → /interaction/:uid; POST prompt=login&login=<login>&password=<any> → 303 to the
    // app's callback with the code (the dev IdP grants its one client without a consent page).
    const back = await browser.authorize(authorizationUrl.href, login)
    expect(back.method).toBe('GET')
    const callbackUrl = new URL(back.url)
    expect(callbackUrl.origin + callbackUrl.pathname).toBe(`${appOrigin}/api/auth/callback/dev-idp`)
    expect(callbackUrl.searchParams.get('code')).toBeTruthy()
    return browser.navigate(back)
  }

  it('offers the dev IdP on the sign-in page, next to the credentials form', async () => {
    const page = await (await fetch(`${appOrigin}/api/auth/signin?callbackUrl=%2Fdashboard`)).text()
    expect(page).toContain('action="/api/auth/signin/dev-idp"')
    expect(page).toContain('Sign in with Local dev identity provider')
    expect(page).toContain('action="/api/auth/callback/credentials"')
    const home = await (await fetch(`${appOrigin}/`)).text()
    expect(home).toContain('or with the local dev identity provider (any name, any password)')
  })

  it('signs a new user in through the IdP\'s dev login, and shows them on /dashboard', async () => {
    const browser = new Browser()
    const callback = await signInWithDevIdp(browser, 'grace')
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${appOrigin}/dashboard`)

    const dashboard = await browser.request(`${appOrigin}/dashboard`, { headers: { accept: 'text/html' } })
    expect(dashboard.status).toBe(200)
    const html = await dashboard.text()
    expect(html).toContain('Welcome, Grace.')
    expect(html).toContain('E-mail: grace@example.test')

    // The first sign-in created the user from the ID token's claims and linked the account.
    const user = await oidcDb('User').where({ email: 'grace@example.test' }).first()
    expect(user).toMatchObject({ name: 'Grace' })
    expect(html).toContain(`<code>${user.id}</code>`)
    expect(await oidcDb('Account').where({ userId: user.id }).select('provider', 'providerAccountId', 'type')).toEqual([
      { provider: 'dev-idp', providerAccountId: 'grace', type: 'oidc' },
    ])
    const me = (await (await browser.request(`${appOrigin}/api/me`)).json()) as Record<string, unknown>
    expect(me).toMatchObject({ id: user.id, name: 'Grace', email: 'grace@example.test' })
  })

  it('signs the same name in again as the same user, from another browser', async () => {
    const browser = new Browser()
    const callback = await signInWithDevIdp(browser, 'grace')
    expect(callback.headers.get('location')).toBe(`${appOrigin}/dashboard`)
    const me = (await (await browser.request(`${appOrigin}/api/me`)).json()) as { id: string }
    const users = await oidcDb('User').where({ email: 'grace@example.test' })
    expect(users).toHaveLength(1)
    expect(me.id).toBe(users[0].id)
  })
})

describe('npm start (examples/express/server.ts)', () => {
  it('creates and migrates its SQLite file, then serves the home page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-example-'))
    const port = examplePort(3)
    const idpPort = port + 1
    const samlIdpPort = port + 2
    const server = await startExampleProcess(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/express/server.ts'], {
      env: { ...process.env, NODE_OPTIONS: '', PORT: String(port), DEV_IDP_PORT: String(idpPort), DEV_SAML_IDP_PORT: String(samlIdpPort), DATABASE_FILE: join(dir, 'example.sqlite'), AUTH_SECRET: 'test-secret-for-the-express-example-0123456789' },
      ready: 'running at',
      name: 'the server',
    })
    try {
      // Loopback only by default (HOST opens it). `localhost` may be bound as ::1 or 127.0.0.1,
      // whichever the resolver lists first: ask for it by name, as a browser does.
      expect(server.output).toContain('listening on localhost')
      const home = await fetch(`http://localhost:${port}/`)
      expect(home.status).toBe(200)
      expect(await home.text()).toContain('You are not signed in.')
      // The dev IdP started first, on DEV_IDP_PORT, and the sign-in page offers it.
      expect(server.output).toContain(`Local dev identity provider (development only: any name and any password sign in) at http://localhost:${idpPort}`)
      // A line says whose oidc-provider's start-up warnings are (Node 20's "Unsupported runtime" among them).
      expect(server.output).toContain('The "oidc-provider WARNING" lines below concern the local dev identity provider only')
      const discovery = await fetch(`http://localhost:${idpPort}/.well-known/openid-configuration`)
      expect(await discovery.json()).toMatchObject({ issuer: `http://localhost:${idpPort}` })
      const signInPage = await (await fetch(`http://localhost:${port}/api/auth/signin`)).text()
      expect(signInPage).toContain('Sign in with Local dev identity provider')
      // Passkeys, bound to http://localhost:<PORT>.
      expect(signInPage).toContain('Sign in with a passkey')
      // The dev SAML IdP on DEV_SAML_IDP_PORT, the demo organization's single sign-on: the address first.
      expect(server.output).toContain(`Local SAML identity provider (development only: any address @analytical-engines.test signs in) at http://localhost:${samlIdpPort}/metadata`)
      expect(signInPage.indexOf('Work e-mail address')).toBeGreaterThan(0)
      expect(await (await fetch(`http://localhost:${samlIdpPort}/metadata`)).text()).toContain(`entityID="http://localhost:${samlIdpPort}/metadata"`)
      const visitor = new Browser()
      const { csrfToken } = (await (await visitor.request(`http://localhost:${port}/api/auth/csrf`)).json()) as { csrfToken: string }
      const started = await visitor.request(`http://localhost:${port}/api/auth/signin/sso`, { body: new URLSearchParams({ csrfToken, email: 'babbage@analytical-engines.test' }) })
      expect(started.headers.get('location')).toMatch(new RegExp(`^http://localhost:${samlIdpPort}/sso\\?SAMLRequest=`))
    } finally {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
    // tsx compiles the example on start: ~3 s alone, several times that on a loaded machine.
  })
})

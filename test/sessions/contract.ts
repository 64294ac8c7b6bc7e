/**
 * What every session store promises a user, run against each: the JWT stores (memory, Knex on
 * SQLite/PostgreSQL/MariaDB, Redis) and database sessions (Knex on the three databases). Two users,
 * each signed in on two browsers (supertest agents keeping their own cookies).
 */
import { beforeEach, expect, it } from '@jest/globals'
import type express from 'express'
import request from 'supertest'
import type { SessionInfo } from 'portcullis'
import { fetchCsrfToken, setCookie } from '../support/flow.js'

/** An app whose credentials provider signs in `ada` and `grace` with any password. */
export interface SessionsApp {
  app: express.Express
  /** The `sessionRevoked` events so far. */
  revoked: Array<{ userId: string; sessionId: string; by: string }>
  /** The session cookie's name. */
  cookieName: string
}

type Agent = ReturnType<typeof request.agent>

export async function signIn(app: express.Express, username: string, userAgent = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0'): Promise<Agent> {
  const agent = request.agent(app).set('User-Agent', userAgent)
  const csrfToken = await fetchCsrfToken(agent)
  const response = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username, password: 'x' })
  expect(response.status).toBe(302)
  expect(new URL(response.headers.location!).searchParams.get('error')).toBeNull()
  return agent
}

export async function list(agent: Agent): Promise<SessionInfo[]> {
  const response = await agent.get('/api/auth/sessions/list').expect(200)
  return response.body.sessions as SessionInfo[]
}

async function signedInAs(agent: Agent): Promise<string | null> {
  const response = await agent.get('/me').expect(200)
  return (response.body as { user?: { name?: string } } | null)?.user?.name ?? null
}

async function post(agent: Agent, path: string, fields: Record<string, string> = {}, csrf = true) {
  const csrfToken = csrf ? await fetchCsrfToken(agent) : 'forged'
  return agent.post(`/api/auth${path}`).type('form').send({ csrfToken, ...fields })
}

/** Declares the contract's tests; `make` builds the app before each test (on an emptied store). */
export function sessionListContract(make: () => SessionsApp | Promise<SessionsApp>): void {
  let subject: SessionsApp
  beforeEach(async () => {
    subject = await make()
  })

  it('lists every device of the user with what identifies it, this one marked, and nobody else’s', async () => {
    const laptop = await signIn(subject.app, 'ada', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0 Safari/537.36')
    const phone = await signIn(subject.app, 'ada', 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/604.1')
    await signIn(subject.app, 'grace')
    const seen = await list(laptop)
    expect(seen).toHaveLength(2)
    const [current, other] = seen
    expect(current).toMatchObject({ current: true, ipAddress: '127.0.0.1', userAgent: expect.stringContaining('Windows NT') })
    expect(other).toMatchObject({ current: false, userAgent: expect.stringContaining('iPhone') })
    for (const session of seen) {
      expect(Date.parse(session.createdAt!)).toBeGreaterThan(Date.now() - 60_000)
      expect(Date.parse(session.lastSeenAt!)).toBeGreaterThanOrEqual(Date.parse(session.createdAt!))
      expect(Date.parse(session.expires)).toBeGreaterThan(Date.now() + 29 * 24 * 3600_000)
    }
    expect((await list(phone)).map((session) => session.id).sort()).toEqual(seen.map((session) => session.id).sort())
    // The page shows the same, with a button for the other device only.
    const page = await laptop.get('/api/auth/sessions').expect(200)
    expect(page.text).toContain('Chrome on Windows')
    expect(page.text).toContain('(this device)')
    expect(page.text.match(/name="id" value="([^"]+)"/g)).toEqual([`name="id" value="${other!.id}"`])
  })

  it('ends another device with its id; the other user’s ids end nothing', async () => {
    const laptop = await signIn(subject.app, 'ada')
    const phone = await signIn(subject.app, 'ada')
    const grace = await signIn(subject.app, 'grace')
    const [graceSession] = await list(grace)
    const phoneId = (await list(phone)).find((session) => session.current)!.id

    const tried = await post(laptop, '/sessions/revoke', { id: graceSession!.id })
    expect(tried.status).toBe(302)
    expect(await signedInAs(grace)).toBe('grace')
    expect(subject.revoked).toEqual([])

    const ended = await post(laptop, '/sessions/revoke', { id: phoneId })
    expect(ended.status).toBe(302)
    expect(ended.headers.location).toMatch(/\/api\/auth\/sessions$/)
    expect(await signedInAs(phone)).toBeNull()
    expect(await signedInAs(laptop)).toBe('ada')
    expect(subject.revoked).toEqual([{ userId: expect.any(String), sessionId: phoneId, by: 'revokeSession' }])
  })

  it('ends the other devices and keeps this one; signing out everywhere ends this one too', async () => {
    const laptop = await signIn(subject.app, 'ada')
    const phone = await signIn(subject.app, 'ada')
    const tablet = await signIn(subject.app, 'ada')
    const grace = await signIn(subject.app, 'grace')
    expect((await post(laptop, '/sessions/revoke-others')).status).toBe(302)
    expect(await signedInAs(phone)).toBeNull()
    expect(await signedInAs(tablet)).toBeNull()
    expect(await signedInAs(laptop)).toBe('ada')
    expect(await list(laptop)).toHaveLength(1)

    const again = await signIn(subject.app, 'ada')
    const everywhere = await post(again, '/sessions/signout-everywhere', { callbackUrl: '/goodbye' })
    expect(everywhere.status).toBe(302)
    expect(new URL(everywhere.headers.location!).pathname).toBe('/goodbye')
    expect(setCookie(everywhere, subject.cookieName)).toMatch(new RegExp(`^${subject.cookieName.replace('.', '\\.')}=;`))
    expect(await signedInAs(again)).toBeNull()
    expect(await signedInAs(laptop)).toBeNull()
    expect(await signedInAs(grace)).toBe('grace')
    expect(subject.revoked.filter((event) => event.by === 'revokeOtherSessions')).toHaveLength(2)
    expect(subject.revoked.filter((event) => event.by === 'signOutEverywhere')).toHaveLength(2)
  })

  it('signing out ends only this device’s session; signing out without one is answered the same way', async () => {
    const laptop = await signIn(subject.app, 'ada')
    const phone = await signIn(subject.app, 'ada')
    const signOut = await post(laptop, '/signout')
    expect(signOut.status).toBe(302)
    expect(setCookie(signOut, subject.cookieName)).toMatch(new RegExp(`^${subject.cookieName.replace('.', '\\.')}=;`))
    expect(await signedInAs(laptop)).toBeNull()
    expect(await signedInAs(phone)).toBe('ada')
    expect(await list(phone)).toHaveLength(1)
    const again = await post(laptop, '/signout')
    expect(again.status).toBe(302)
    expect(again.headers.location).not.toMatch(/error=/)
  })

  it('a new sign-in in the same browser replaces its session in the list', async () => {
    const browser = await signIn(subject.app, 'ada')
    const [first] = await list(browser)
    const csrfToken = await fetchCsrfToken(browser)
    await browser.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'x' }).expect(302)
    const after = await list(browser)
    expect(after).toHaveLength(1)
    expect(after[0]!.id).not.toBe(first!.id)
  })

  it('refuses every revocation without the CSRF token, or from another site', async () => {
    const laptop = await signIn(subject.app, 'ada')
    const phone = await signIn(subject.app, 'ada')
    const phoneId = (await list(phone)).find((session) => session.current)!.id
    for (const [path, fields] of [['/sessions/revoke', { id: phoneId }], ['/sessions/revoke-others', {}], ['/sessions/signout-everywhere', {}]] as const) {
      const forged = await post(laptop, path, fields, false)
      expect(forged.status).toBe(302)
      expect(forged.headers.location).toMatch(/error=MissingCSRF/)
      const csrfToken = await fetchCsrfToken(laptop)
      const crossSite = await laptop.post(`/api/auth${path}`).set('Sec-Fetch-Site', 'cross-site').type('form').send({ csrfToken, ...fields })
      expect(crossSite.headers.location).toMatch(/error=MissingCSRF/)
    }
    expect(await signedInAs(phone)).toBe('ada')
    expect(await signedInAs(laptop)).toBe('ada')
    expect(await list(laptop)).toHaveLength(2)
  })

  it('sends a signed-out visitor to sign in, and answers a JSON client with 401', async () => {
    const visitor = request.agent(subject.app)
    const page = await visitor.get('/api/auth/sessions').expect(302)
    expect(new URL(page.headers.location!).pathname).toBe('/api/auth/signin')
    await visitor.get('/api/auth/sessions/list').expect(401)
    const csrfToken = await fetchCsrfToken(visitor)
    const revoke = await visitor.post('/api/auth/sessions/signout-everywhere').type('form').send({ csrfToken })
    expect(new URL(revoke.headers.location!).pathname).toBe('/api/auth/signin')
  })

  it('a copy of the cookie taken before sign-out no longer signs anyone in', async () => {
    const browser = request.agent(subject.app)
    const csrfToken = await fetchCsrfToken(browser)
    const signedIn = await browser.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'x' })
    const stolen = setCookie(signedIn, subject.cookieName)!.split(';')[0]!
    expect((await request(subject.app).get('/me').set('Cookie', stolen).expect(200)).body.user.name).toBe('ada')
    expect((await post(browser, '/signout')).status).toBe(302)
    expect((await request(subject.app).get('/me').set('Cookie', stolen).expect(200)).body).toBeNull()
  })
}

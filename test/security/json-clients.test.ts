/**
 * JSON clients (`X-Auth-Return-Redirect: 1`, as Auth.js's `signIn()` sends it) get Auth.js's
 * `{ url }` with status 200, and a failure says so in the body, `{ url, error, code }`, instead of
 * leaving the client to find `?error=` in the URL. The `auth` middleware refuses them with a 401.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import { CredentialsSignin } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { createTestApp, fetchCsrfToken } from '../support/flow.js'

class AccountLocked extends CredentialsSignin {
  override code = 'account_locked'
}

/** POST /callback/:provider as Auth.js's client does: JSON body, X-Auth-Return-Redirect: 1. */
async function jsonSignIn(app: express.Express, fields: Record<string, string>, { provider = 'credentials', csrf = true } = {}) {
  const agent = request.agent(app)
  const csrfToken = csrf ? await fetchCsrfToken(agent) : 'forged'
  return agent.post(`/api/auth/callback/${provider}`).set('X-Auth-Return-Redirect', '1').type('json').send({ csrfToken, ...fields })
}

function query(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams)
}

describe('X-Auth-Return-Redirect: 1', () => {
  const { app } = createTestApp({ logger: { error: () => {}, warn: () => {}, debug: () => {} }, trustHost: true })

  it('answers a wrong password with 200 { url, error: "CredentialsSignin", code }, and no session', async () => {
    const response = await jsonSignIn(app, { username: 'ada', password: 'wrong' })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ url: expect.any(String), error: 'CredentialsSignin', code: 'credentials', message: 'The credentials were refused: check them and try again.' })
    expect(new URL(response.body.url).pathname).toBe('/api/auth/signin')
    // The URL carries the same code, for clients that read it from there (Auth.js's does).
    expect(query(response.body.url)).toEqual({ error: 'CredentialsSignin', code: 'credentials' })
    expect(response.headers['set-cookie']?.toString() ?? '').not.toMatch(/authjs\.session-token=[^;]/)
  })

  it('answers a success with { url } only, even when the callbackUrl has an error parameter of its own', async () => {
    const plain = await jsonSignIn(app, { username: 'ada', password: 'lovelace', callbackUrl: '/after' })
    expect(plain.status).toBe(200)
    expect(Object.keys(plain.body)).toEqual(['url'])
    expect(new URL(plain.body.url).pathname).toBe('/after')

    const withQuery = await jsonSignIn(app, { username: 'ada', password: 'lovelace', callbackUrl: '/report?error=none&code=7' })
    expect(Object.keys(withQuery.body)).toEqual(['url'])
    expect(query(withQuery.body.url)).toEqual({ error: 'none', code: '7' })
  })

  it('reports a missing CSRF token as { url, error: "MissingCSRF", message } with the fix', async () => {
    const response = await jsonSignIn(app, { username: 'ada', password: 'lovelace' }, { csrf: false })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ url: expect.stringContaining('/api/auth/signin?error=MissingCSRF'), error: 'MissingCSRF', message: expect.stringContaining('GET /api/auth/csrf') })
  })

  it("passes a CredentialsSignin subclass's code, and reports the server's faults and refusals as the error page does", async () => {
    const quiet = { error: () => {}, warn: () => {}, debug: () => {} }
    const locked = createTestApp({ logger: quiet, providers: [Credentials({ authorize: async () => Promise.reject(new AccountLocked()) })] }).app
    expect((await jsonSignIn(locked, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringContaining('error=CredentialsSignin&code=account_locked'),
      error: 'CredentialsSignin',
      code: 'account_locked',
      message: expect.any(String),
    })

    const broken = createTestApp({ logger: quiet, providers: [Credentials({ authorize: async () => Promise.reject(new Error('database down')) })] }).app
    expect((await jsonSignIn(broken, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringMatching(/\/api\/auth\/error\?error=Configuration$/),
      error: 'Configuration',
      message: 'The server could not complete the request; its log says why.',
    })

    const refused = createTestApp({ logger: quiet, callbacks: { signIn: () => false } }).app
    expect((await jsonSignIn(refused, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringMatching(/\/api\/auth\/error\?error=AccessDenied$/),
      error: 'AccessDenied',
      message: 'The signIn callback refused this sign-in.',
    })
  })

  it('leaves browsers (no header) the 302 with the codes in the Location', async () => {
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'wrong' }).expect(302)
    expect(query(response.headers.location!)).toEqual({ error: 'CredentialsSignin', code: 'credentials' })
  })

  it('gets 401, not 200, from the auth middleware for an unauthenticated request', async () => {
    const { app: protectedApp, auth } = createTestApp({ trustHost: true, callbacks: { authorized: ({ auth: session }) => !!session } })
    protectedApp.use(auth)
    protectedApp.get('/dashboard', (_req, res) => void res.send('secret'))
    const response = await request(protectedApp).get('/dashboard').set('X-Auth-Return-Redirect', '1')
    expect(response.status).toBe(401)
    expect(response.body).toMatchObject({ error: 'SessionRequired', url: expect.stringContaining('/api/auth/signin?callbackUrl=') })
  })
})

describe('requests that ask for JSON without X-Auth-Return-Redirect', () => {
  const { app } = createTestApp({ logger: { error: () => {}, warn: () => {}, debug: () => {} }, trustHost: true })

  it('answers a post with a CSRF token gone stale at sign-in with 403 JSON: the code and the fix, not a 302 to the sign-in page', async () => {
    const agent = request.agent(app)
    const stale = await fetchCsrfToken(agent)
    await agent.post('/api/auth/callback/credentials').set('X-Auth-Return-Redirect', '1').type('json').send({ csrfToken: stale, username: 'ada', password: 'lovelace' }).expect(200)
    // The sign-in rotated the token: the one the client kept is refused.
    const response = await agent.post('/api/auth/signout').set('Accept', 'application/json').type('json').send({ csrfToken: stale })
    expect(response.status).toBe(403)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    expect(response.headers.location).toBeUndefined()
    expect(response.body).toEqual({
      error: 'MissingCSRF',
      message: expect.stringContaining('Fetch a new one from GET /api/auth/csrf'),
      url: expect.stringContaining('/api/auth/signin?error=MissingCSRF'),
    })
    // Still signed in: the refused sign-out changed nothing.
    expect((await agent.get('/api/auth/session').expect(200)).body).toMatchObject({ user: { name: 'Ada Lovelace' } })
  })

  it('treats a JSON body as asking for JSON, and an Accept that prefers it too; a wrong password is a 401 with its code', async () => {
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    const byBody = await agent.post('/api/auth/callback/credentials').type('json').send({ csrfToken, username: 'ada', password: 'wrong' })
    expect(byBody.status).toBe(401)
    expect(byBody.body).toEqual({ error: 'CredentialsSignin', code: 'credentials', message: expect.any(String), url: expect.stringContaining('code=credentials') })

    const byAccept = await agent.post('/api/auth/callback/credentials').set('Accept', 'application/json').type('form').send({ csrfToken: 'forged', username: 'ada', password: 'lovelace' })
    expect(byAccept.status).toBe(403)
    expect(byAccept.body.error).toBe('MissingCSRF')
  })

  it('leaves a browser form post with a stale token the 302 to the sign-in page', async () => {
    const response = await request(app)
      .post('/api/auth/signout')
      .set('Accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')
      .type('form')
      .send({ csrfToken: 'stale' })
      .expect(302)
    expect(response.headers.location).toMatch(/\/api\/auth\/signin\?error=MissingCSRF$/)
  })
})

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
    expect(response.body).toEqual({ url: expect.any(String), error: 'CredentialsSignin', code: 'credentials' })
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

  it('reports a missing CSRF token as { url, error: "MissingCSRF" }', async () => {
    const response = await jsonSignIn(app, { username: 'ada', password: 'lovelace' }, { csrf: false })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ url: expect.stringContaining('/api/auth/signin?error=MissingCSRF'), error: 'MissingCSRF' })
  })

  it("passes a CredentialsSignin subclass's code, and reports the server's faults and refusals as the error page does", async () => {
    const quiet = { error: () => {}, warn: () => {}, debug: () => {} }
    const locked = createTestApp({ logger: quiet, providers: [Credentials({ authorize: async () => Promise.reject(new AccountLocked()) })] }).app
    expect((await jsonSignIn(locked, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringContaining('error=CredentialsSignin&code=account_locked'),
      error: 'CredentialsSignin',
      code: 'account_locked',
    })

    const broken = createTestApp({ logger: quiet, providers: [Credentials({ authorize: async () => Promise.reject(new Error('database down')) })] }).app
    expect((await jsonSignIn(broken, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringMatching(/\/api\/auth\/error\?error=Configuration$/),
      error: 'Configuration',
    })

    const refused = createTestApp({ logger: quiet, callbacks: { signIn: () => false } }).app
    expect((await jsonSignIn(refused, { username: 'ada', password: 'lovelace' })).body).toEqual({
      url: expect.stringMatching(/\/api\/auth\/error\?error=AccessDenied$/),
      error: 'AccessDenied',
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

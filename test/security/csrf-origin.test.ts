/**
 * CSRF beyond the double-submit token: every state-changing POST (sign-in, sign-out, session
 * update) is refused when the browser says it comes from another origin (`Sec-Fetch-Site`, else
 * `Origin`), even with a genuine cookie-and-token pair (which a sibling subdomain can plant); and
 * the token is rotated on sign-in and sign-out.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis from 'portcullis'
import { SECRET, credentialsProvider, fetchCsrfToken, setCookie } from '../support/flow.js'

const silent = { error: () => {}, warn: () => {}, debug: () => {} }

function app() {
  const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], logger: silent })
  const server = express()
  server.use('/api/auth', handlers)
  server.get('/me', async (req, res) => void res.json(await auth(req, res)))
  return server
}

const ORIGIN = 'http://app.test'
const credentials = { username: 'ada', password: 'lovelace' }

/** An agent on Host app.test with a valid CSRF pair. */
async function agentWithToken() {
  const agent = request.agent(app()).host('app.test')
  return { agent, csrfToken: await fetchCsrfToken(agent) }
}

async function signedIn() {
  const { agent, csrfToken } = await agentWithToken()
  await agent.post('/api/auth/callback/credentials').set('Sec-Fetch-Site', 'same-origin').type('form').send({ csrfToken, ...credentials }).expect(302)
  return { agent, csrfToken: await fetchCsrfToken(agent) }
}

describe('state-changing POSTs from another origin are refused, even with a valid token', () => {
  const crossSite: [string, Record<string, string>][] = [
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', { 'Sec-Fetch-Site': 'same-site', Origin: 'http://evil.app.test' }],
    ['Origin of another site (no Sec-Fetch-Site)', { Origin: 'https://evil.example' }],
    ['Origin: null (a sandboxed frame)', { Origin: 'null' }],
  ]

  it.each(crossSite)('credentials sign-in with %s', async (_name, headers) => {
    const { agent, csrfToken } = await agentWithToken()
    const response = await agent.post('/api/auth/callback/credentials').set(headers).type('form').send({ csrfToken, ...credentials }).expect(302)
    expect(response.headers.location).toBe(`${ORIGIN}/api/auth/signin?error=MissingCSRF`)
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })

  it.each(crossSite)('sign-out with %s', async (_name, headers) => {
    const { agent, csrfToken } = await signedIn()
    await agent.post('/api/auth/signout').set(headers).type('form').send({ csrfToken }).expect(302)
    expect((await agent.get('/me')).body?.user?.name).toBe('Ada Lovelace')
  })

  it.each(crossSite)('session update with %s', async (_name, headers) => {
    const { agent, csrfToken } = await signedIn()
    expect((await agent.post('/api/auth/session').set(headers).send({ csrfToken, data: { name: 'x' } })).status).toBe(403)
  })

  it.each(crossSite)('starting a provider sign-in with %s', async (_name, headers) => {
    const { agent, csrfToken } = await agentWithToken()
    const response = await agent.post('/api/auth/signin/credentials').set(headers).type('form').send({ csrfToken }).expect(302)
    expect(response.headers.location).toBe(`${ORIGIN}/api/auth/signin?error=MissingCSRF`)
  })
})

describe('same-origin POSTs and clients without those headers still work', () => {
  it.each([
    ['Sec-Fetch-Site: same-origin', { 'Sec-Fetch-Site': 'same-origin', Origin: ORIGIN }],
    // What a browser sends for a request the user started (the address bar, a bookmark).
    ['Sec-Fetch-Site: none', { 'Sec-Fetch-Site': 'none' }],
    ['Origin of the site (no Sec-Fetch-Site)', { Origin: ORIGIN }],
    ['neither header (a server-side client)', {}],
  ])('%s', async (_name, headers: Record<string, string>) => {
    const { agent, csrfToken } = await agentWithToken()
    const response = await agent.post('/api/auth/callback/credentials').set(headers).type('form').send({ csrfToken, ...credentials }).expect(302)
    expect(response.headers.location).toBe(`${ORIGIN}/`)
  })
})

describe('rotation', () => {
  it('sign-in retires the CSRF token it was made with; sign-out retires the next one', async () => {
    const { agent, csrfToken: beforeSignIn } = await agentWithToken()
    const signIn = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken: beforeSignIn, ...credentials }).expect(302)
    expect(setCookie(signIn, 'authjs.csrf-token')).toMatch(/^authjs\.csrf-token=;.*Max-Age=0/)
    // The old token no longer signs out …
    expect((await agent.post('/api/auth/signout').type('form').send({ csrfToken: beforeSignIn })).headers.location).toContain('error=MissingCSRF')
    // … the page's new one does, and is retired in turn.
    const afterSignIn = await fetchCsrfToken(agent)
    expect(afterSignIn).not.toBe(beforeSignIn)
    const signOut = await agent.post('/api/auth/signout').type('form').send({ csrfToken: afterSignIn }).expect(302)
    expect(setCookie(signOut, 'authjs.csrf-token')).toMatch(/^authjs\.csrf-token=;.*Max-Age=0/)
    expect((await agent.get('/me')).body).toBeNull()
  })

  it('names the cookie __Host-authjs.csrf-token over HTTPS', async () => {
    const response = await request(app()).get('/api/auth/csrf').set('X-Forwarded-Proto', 'https')
    // X-Forwarded-Proto is not trusted by default; AUTH_URL or trust proxy makes the request secure.
    expect(setCookie(response, 'authjs.csrf-token')).toBeDefined()
    const secureApp = express()
    secureApp.set('trust proxy', true)
    secureApp.use('/api/auth', Portcullis({ secret: SECRET, providers: [credentialsProvider], logger: silent }).handlers)
    const secure = await request(secureApp).get('/api/auth/csrf').set('X-Forwarded-Proto', 'https')
    expect(setCookie(secure, '__Host-authjs.csrf-token')).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
  })
})

/**
 * The whole credentials flow, as a browser does it, on Express 4 and Express 5:
 * csrf -> callback -> session cookie -> auth(req, res) -> /session -> sign-out clears it.
 */
import express from 'express'
import express4 from 'express4'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import { createServer } from 'node:http'
import Portcullis from 'portcullis'
import { SECRET, createTestApp, credentialsProvider, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

describe.each([
  ['Express 5', express],
  ['Express 4', express4],
])('credentials sign-in on %s', (_name, createExpress) => {
  const { app } = createTestApp({}, createExpress as () => express.Express)

  it('signs in, serves the session to auth() and /session, and signs out', async () => {
    const agent = request.agent(app)
    expect((await agent.get('/me').expect(200)).body).toBeNull()

    const callback = await signInWithPassword(agent, { username: 'ada', password: 'lovelace', callbackUrl: '/dashboard' })
    expect(callback.status).toBe(302)
    expect(new URL(callback.headers.location!).pathname).toBe('/dashboard')
    const sessionCookie = setCookie(callback, 'authjs.session-token')
    expect(sessionCookie).toMatch(/^authjs\.session-token=eyJ[^;]+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/)

    const me = await agent.get('/me').expect(200)
    expect(me.body).toEqual({ user: { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' }, expires: expect.any(String) })
    expect(Date.parse(me.body.expires) - Date.now()).toBeGreaterThan(29 * 24 * 3600 * 1000)

    const session = await agent.get('/api/auth/session').expect(200)
    expect(session.headers['cache-control']).toContain('no-store')
    expect(session.body.user.id).toBe('user-1')

    const csrfToken = await fetchCsrfToken(agent)
    const signOut = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/bye' })
    expect(signOut.status).toBe(302)
    expect(new URL(signOut.headers.location!).pathname).toBe('/bye')
    expect(setCookie(signOut, 'authjs.session-token')).toMatch(/^authjs\.session-token=; Max-Age=0;/)
    expect((await agent.get('/me').expect(200)).body).toBeNull()
    expect((await agent.get('/api/auth/session').expect(200)).body).toBeNull()
  })

  it('sends a wrong password back to the sign-in page with the error code, and no session', async () => {
    const agent = request.agent(app)
    const callback = await signInWithPassword(agent, { username: 'ada', password: 'wrong' })
    expect(callback.status).toBe(302)
    const location = new URL(callback.headers.location!)
    expect(location.pathname).toBe('/api/auth/signin')
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'CredentialsSignin', code: 'credentials' })
    expect(setCookie(callback, 'authjs.session-token')).toBeUndefined()
    expect((await agent.get('/me')).body).toBeNull()

    const page = await agent.get(`${location.pathname}${location.search}`).expect(200)
    // This browser's refused form: the message stands at it, naming it, and the username comes back.
    expect(page.text).toContain('Sign in with Credentials failed. Check the details you entered are correct.')
    expect(page.text).toMatch(/<input[^>]*name="username"[^>]*value="ada"/)
    // Another browser (no form cookie) gets the page's message at the top.
    const other = await request(app).get(`${location.pathname}${location.search}`).expect(200)
    expect(other.text).toContain('Sign in failed. Check the details you provided are correct.')
  })

  it('reads a form post behind an app-wide express.json() (Express 4 sets req.body = {} without reading it)', async () => {
    const { handlers } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
    const withParsers = (createExpress as () => express.Express)()
    withParsers.use((createExpress as typeof express).json())
    withParsers.use('/api/auth', handlers)
    const response = await signInWithPassword(request.agent(withParsers))
    expect(response.headers.location).not.toMatch(/error=/)
    expect(setCookie(response, 'authjs.session-token')).toBeDefined()
  })

  it('answers {url} JSON instead of a redirect for X-Auth-Return-Redirect: 1', async () => {
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent
      .post('/api/auth/callback/credentials')
      .set('X-Auth-Return-Redirect', '1')
      .type('json')
      .send({ csrfToken, username: 'ada', password: 'lovelace', callbackUrl: '/after' })
      .expect(200)
    expect(new URL(response.body.url).pathname).toBe('/after')
    expect(setCookie(response, 'authjs.session-token')).toBeDefined()
  })
})

describe('mounting', () => {
  it('serves the routes under any mount path and links to that path', async () => {
    const { handlers, auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], basePath: '/auth' })
    const app = express()
    app.use('/auth', handlers)
    app.get('/me', async (req, res) => {
      res.json(await auth(req, res))
    })
    const response = await request(app).get('/auth/providers').expect(200)
    expect(new URL(response.body.credentials.signinUrl).pathname).toBe('/auth/signin/credentials')
    const page = await request(app).get('/auth/signin').expect(200)
    expect(page.text).toContain('action="/auth/callback/credentials"')
    expect((await request(app).get('/api/auth/providers')).status).toBe(404)
  })

  it('works route-style with handlers.GET / handlers.POST (Express 5 wildcard)', async () => {
    const { handlers, auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
    const app = express()
    app.get('/api/auth/*splat', handlers.GET)
    app.post('/api/auth/*splat', handlers.POST)
    app.get('/me', async (req, res) => {
      res.json(await auth(req, res))
    })
    const agent = request.agent(app)
    expect((await signInWithPassword(agent)).status).toBe(302)
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('works as the whole request handler of a node:http server', async () => {
    const { handlers, auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
    const server = createServer(async (req, res) => {
      if (req.url === '/me') return void res.end(JSON.stringify(await auth(req, res)))
      await handlers(req, res)
    })
    const agent = request.agent(server)
    expect((await signInWithPassword(agent)).status).toBe(302)
    expect(JSON.parse((await agent.get('/me')).text).user.id).toBe('user-1')
    expect((await agent.get('/elsewhere')).status).toBe(400)
  })
})

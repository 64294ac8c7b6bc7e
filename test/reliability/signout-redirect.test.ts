/**
 * Where sign-out sends the user: the `callbackUrl` (or `redirectTo`) of the request, through the
 * `redirect` callback, else the site's root. Never the callback-url cookie: it is left over from the
 * sign-in and usually names the protected page the user just left, which bounces them straight back
 * to the sign-in page.
 */
import type { Server } from 'node:http'
import express from 'express'
import request from 'supertest'
import { afterAll, describe, expect, it, jest } from '@jest/globals'
import type { PortcullisConfig } from 'portcullis'
import { createTestApp, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'

const SESSION_COOKIE = 'authjs.session-token'
const CALLBACK_COOKIE = 'authjs.callback-url'

const servers: Server[] = []
afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))))

/**
 * An app whose `/protected` page sends signed-out visitors to the sign-in page, as apps do. It
 * listens on one port for the whole test: the callback-url cookie holds an absolute URL, which the
 * redirect callback keeps only on the same origin (supertest would start a server per request).
 */
async function protectedApp(config: Partial<PortcullisConfig> = {}): Promise<Server> {
  const { app, auth } = createTestApp(config)
  app.get('/protected', async (req: express.Request, res: express.Response) => {
    if (!(await auth(req, res))) return res.redirect(`/api/auth/signin?callbackUrl=${encodeURIComponent('/protected')}`)
    res.send('secret page')
  })
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise((resolve) => server.once('listening', resolve))
  return server
}

/** Signs in from `/protected` (so the callback-url cookie names it) and returns the agent and a fresh CSRF token. */
async function signedInFromProtectedPage(app: Server) {
  const agent = request.agent(app)
  const signIn = await signInWithPassword(agent, { username: 'ada', password: 'lovelace', callbackUrl: '/protected' })
  expect(new URL(signIn.headers.location!).pathname).toBe('/protected')
  expect(setCookie(signIn, CALLBACK_COOKIE)).toMatch(/%2Fprotected;/)
  expect(setCookie(signIn, SESSION_COOKIE)).toBeDefined()
  return { agent, csrfToken: await fetchCsrfToken(agent) }
}

describe('sign-out redirect', () => {
  // Regression: POST /signout fell back to the callback-url cookie, i.e. /protected, which then
  // redirected the now signed-out user to the sign-in page.
  it('goes to the site root, not to the protected page in the leftover callback-url cookie', async () => {
    const app = await protectedApp()
    const { agent, csrfToken } = await signedInFromProtectedPage(app)
    const out = await agent.post('/api/auth/signout').type('form').send({ csrfToken }).expect(302)
    expect(out.headers.location).toBe(`${new URL(out.request.url).origin}/`)
    expect(setCookie(out, SESSION_COOKIE)).toMatch(/^authjs\.session-token=; Max-Age=0;/)
    // And the root is where the user lands, not the sign-in page.
    expect((await agent.get('/protected')).headers.location).toMatch(/^\/api\/auth\/signin/)
  })

  it.each([
    ['callbackUrl in the form', { callbackUrl: '/bye' }, ''],
    ['redirectTo in the form (as Auth.js clients name it)', { redirectTo: '/bye' }, ''],
    ['callbackUrl in the query', {}, '?callbackUrl=%2Fbye'],
    ['redirectTo in the query', {}, '?redirectTo=%2Fbye'],
  ])('goes to the %s', async (_where, fields, query) => {
    const { agent, csrfToken } = await signedInFromProtectedPage(await protectedApp())
    const out = await agent.post(`/api/auth/signout${query}`).type('form').send({ csrfToken, ...fields }).expect(302)
    expect(new URL(out.headers.location!).pathname).toBe('/bye')
  })

  it('passes the requested URL through the redirect callback, and sends an off-site one to the root', async () => {
    const redirect = jest.fn<NonNullable<NonNullable<PortcullisConfig['callbacks']>['redirect']>>(({ url, baseUrl }) =>
      url.startsWith('/') ? `${baseUrl}${url}` : baseUrl,
    )
    const app = await protectedApp({ callbacks: { redirect } })
    const { agent, csrfToken } = await signedInFromProtectedPage(app)
    redirect.mockClear()
    const out = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: 'https://evil.example/' }).expect(302)
    expect(redirect).toHaveBeenCalledWith({ url: 'https://evil.example/', baseUrl: new URL(out.request.url).origin })
    expect(out.headers.location).toBe(`${new URL(out.request.url).origin}/`)
  })

  it('puts the root, not the leftover cookie, in the form of the sign-out page, and sets no callback-url cookie', async () => {
    const app = await protectedApp()
    const { agent } = await signedInFromProtectedPage(app)
    const page = await agent.get('/api/auth/signout').expect(200)
    expect(page.text).toMatch(/name="callbackUrl" value="http:\/\/127\.0\.0\.1:\d+\/"/)
    expect(setCookie(page, CALLBACK_COOKIE)).toBeUndefined()
    const asked = await agent.get('/api/auth/signout?callbackUrl=%2Fbye').expect(200)
    expect(asked.text).toMatch(/name="callbackUrl" value="http:\/\/127\.0\.0\.1:\d+\/bye"/)
    expect(setCookie(asked, CALLBACK_COOKIE)).toBeUndefined()
  })

  it('sends GET /signout to pages.signOut with the root, not the leftover cookie, as callbackUrl', async () => {
    const app = await protectedApp({ pages: { signOut: '/logout' } })
    const { agent } = await signedInFromProtectedPage(app)
    const location = new URL((await agent.get('/api/auth/signout').expect(302)).headers.location!)
    expect(location.pathname).toBe('/logout')
    expect(location.searchParams.get('callbackUrl')).toBe(`${location.origin}/`)
  })
})

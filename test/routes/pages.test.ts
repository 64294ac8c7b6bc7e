/** Built-in pages through the router, the app's own pages (`pages`), and custom CredentialsSignin codes. */
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import { CredentialsSignin } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { createTestApp, fetchCsrfToken, signInWithPassword } from '../support/flow.js'

class AccountLocked extends CredentialsSignin {
  override code = 'account_locked'
}

describe('built-in pages', () => {
  const { app } = createTestApp({ theme: { brandColor: '#ff5500', colorScheme: 'dark' } })

  it('renders the sign-in page with the credentials form, CSRF token and callbackUrl', async () => {
    const agent = request.agent(app)
    const page = await agent.get('/api/auth/signin?callbackUrl=%2Fdashboard').expect(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.text).toContain('action="/api/auth/callback/credentials"')
    expect(page.text).toMatch(/<input[^>]+name="username"/)
    expect(page.text).toMatch(/<input[^>]+type="password"[^>]*name="password"|<input[^>]+name="password"[^>]*type="password"/)
    expect(page.text).toContain('value="http://127.0.0.1')
    expect(page.text).toContain('/dashboard"')
    expect(page.text).toContain('#ff5500')
    // The token in the form is the one the CSRF cookie vouches for.
    const token = /name="csrfToken" value="([0-9a-f]{64})"/.exec(page.text)?.[1]
    expect(token).toBeDefined()
    expect(await fetchCsrfToken(agent)).toBe(token)
  })

  it('renders the sign-out confirmation, the error page by code, and verify-request', async () => {
    const signOut = await request(app).get('/api/auth/signout').expect(200)
    expect(signOut.text).toContain('action="/api/auth/signout"')
    expect((await request(app).get('/api/auth/error?error=Configuration')).status).toBe(500)
    expect((await request(app).get('/api/auth/error?error=AccessDenied')).status).toBe(403)
    expect((await request(app).get('/api/auth/error?error=Verification')).status).toBe(403)
    expect((await request(app).get('/api/auth/error?error=Whatever')).status).toBe(200)
    expect((await request(app).get('/api/auth/verify-request').expect(200)).text).toContain('Check your e-mail')
  })
})

describe('the app\'s own pages', () => {
  const { app } = createTestApp({ pages: { signIn: '/login', signOut: '/logout', error: '/oops', verifyRequest: '/check-mail' } })

  it('redirects each built-in page to the configured one, keeping callbackUrl and error', async () => {
    const signIn = await request(app).get('/api/auth/signin?callbackUrl=%2Fdashboard&error=SessionRequired').expect(302)
    const location = new URL(signIn.headers.location!)
    expect(location.pathname).toBe('/login')
    expect(location.searchParams.get('error')).toBe('SessionRequired')
    expect(new URL(location.searchParams.get('callbackUrl')!).pathname).toBe('/dashboard')
    expect(new URL((await request(app).get('/api/auth/signout').expect(302)).headers.location!).pathname).toBe('/logout')
    expect((await request(app).get('/api/auth/error?error=AccessDenied').expect(302)).headers.location).toMatch(/\/oops\?error=AccessDenied$/)
    expect(new URL((await request(app).get('/api/auth/verify-request').expect(302)).headers.location!).pathname).toBe('/check-mail')
  })

  it('sends sign-in failures to the configured sign-in page', async () => {
    const response = await signInWithPassword(request.agent(app), { username: 'ada', password: 'nope' })
    expect(response.headers.location).toMatch(/\/login\?error=CredentialsSignin&code=credentials$/)
  })
})

describe('CredentialsSignin codes', () => {
  it('passes the code of a CredentialsSignin subclass thrown by authorize to the sign-in page', async () => {
    const locked = Credentials({
      authorize: async () => {
        throw new AccountLocked()
      },
    })
    const { app } = createTestApp({ providers: [locked] })
    const response = await signInWithPassword(request.agent(app), { username: 'ada', password: 'lovelace' })
    const location = new URL(response.headers.location!)
    expect(location.pathname).toBe('/api/auth/signin')
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'CredentialsSignin', code: 'account_locked' })
  })
})

describe('the way back to the app, and the icon', () => {
  const GET_PAGES = ['/signin', '/signin?error=CredentialsSignin', '/signout', '/error?error=Configuration', '/error?error=AccessDenied', '/error', '/verify-request']

  it('links every built-in page back to pages.home', async () => {
    const { app } = createTestApp({ pages: { home: '/account' } })
    const agent = request.agent(app)
    expect((await signInWithPassword(agent)).status).toBe(302)
    for (const path of GET_PAGES) {
      const page = await agent.get(`/api/auth${path}`)
      expect([path, page.status, page.headers['content-type']]).toEqual([path, expect.any(Number), 'text/html; charset=utf-8'])
      // Under the card, or the card's own link where it leads home already (the error and check-your-e-mail pages).
      expect(page.text).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/account"/)
    }
  })

  it("links to the site's root without pages.home, and asks no page for a /favicon.ico", async () => {
    const { app } = createTestApp()
    const agent = request.agent(app)
    expect((await signInWithPassword(agent)).status).toBe(302)
    for (const path of GET_PAGES) {
      const page = await agent.get(`/api/auth${path}`)
      expect(page.text).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/"/)
      // An empty icon of its own: browsers do not fetch /favicon.ico, which the app may not serve.
      expect(page.text).toContain('<link rel="icon" href="data:,">')
    }
  })
})

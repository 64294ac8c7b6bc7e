/**
 * Two sites of one company: site A runs the authorization server; site B is another Portcullis app
 * that signs its users in with A through the generic `oidc` provider (discovery, the code flow with
 * PKCE, the ID token checked, userinfo). A user signs in on A, then on B with A: consent on A, back
 * on B signed in as A's user. The second sign-in on B asks no consent (a web client: remembered);
 * signing out of B leaves A signed in (two sites).
 */
import type { RequestListener } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import OIDC from 'portcullis/providers/oidc'
import { authApp, closeAll, listenApp, type AuthApp } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { Browser, signedInBrowser, startServerApp, WEB_SECRET, type ServerApp } from './as-app.js'

const server = await findDatabaseServer('sqlite')

describe('a second site signs in with Portcullis as its OpenID Provider', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let siteA: ServerApp
  let siteB: AuthApp & { origin: string }

  beforeAll(async () => {
    let handlerB: RequestListener = (_req, res) => void res.writeHead(503).end()
    const { origin: originB } = await listenApp((req, res) => handlerB(req, res))
    siteA = await startServerApp(db.knex, {
      authorizationServer: { clients: [{ client_id: 'site-b', client_name: 'Site B', client_secret: WEB_SECRET, redirect_uris: [`${originB}/api/auth/callback/acme`] }] },
    })
    const previous = process.env['AUTH_URL']
    process.env['AUTH_URL'] = `${originB}/api/auth`
    const b = authApp({
      secret: 'another-site-secret-at-least-32-characters',
      providers: [OIDC({ id: 'acme', name: 'Acme', issuer: siteA.issuer, clientId: 'site-b', clientSecret: WEB_SECRET, dangerouslyAllowInsecureRequests: true })],
    })
    if (previous === undefined) delete process.env['AUTH_URL']
    else process.env['AUTH_URL'] = previous
    handlerB = b.app
    siteB = { ...b, origin: originB }
  })

  /** Starts "sign in with Acme" on B in `browser`, and follows it through A up to the consent page or back to B. */
  async function signInOnB(browser: Browser): Promise<Response> {
    const start = await browser.request(`${siteB.origin}/api/auth/signin/acme`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, siteB.origin), callbackUrl: `${siteB.origin}/me` }) })
    let response = await browser.follow(start, siteA.origin)
    const location = response.headers.get('location')
    if (location?.startsWith(siteB.origin)) response = await browser.follow(await browser.request(location), siteB.origin)
    return response
  }

  it('signs A\'s user in on B after consent on A; the second time without consent; signing out of B leaves A', async () => {
    const browser = await signedInBrowser(siteA, 'ada@example.com')
    const consent = await signInOnB(browser)
    expect(await consent.clone().text()).toContain('Site B wants to use your account')
    const form = await browser.formOf(consent)
    form.body.set('decision', 'allow')
    const back = await browser.follow(await browser.navigate(form), siteA.origin)
    const callback = back.headers.get('location')!
    expect(callback.startsWith(`${siteB.origin}/api/auth/callback/acme?`)).toBe(true)
    expect(new URL(callback).searchParams.get('iss')).toBe(siteA.issuer)
    const signedIn = await browser.request(callback)
    expect(signedIn.headers.get('location')).toBe(`${siteB.origin}/me`)
    const me = (await (await browser.request(`${siteB.origin}/me`)).json()) as { user?: { email?: string; name?: string } }
    expect(me.user).toMatchObject({ email: 'ada@example.com', name: 'ada' })

    // Signed out of B: B's session ends, A's stands; signing in on B again asks no consent.
    await browser.request(`${siteB.origin}/api/auth/signout`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, siteB.origin) }) })
    expect(await (await browser.request(`${siteB.origin}/me`)).json()).toBeNull()
    expect(((await (await browser.request(`${siteA.origin}/me`)).json()) as { user?: { email?: string } }).user?.email).toBe('ada@example.com')
    const again = await signInOnB(browser)
    expect(again.url).toBe(`${siteB.origin}/me`)
    expect(((await again.json()) as { user?: { email?: string } }).user?.email).toBe('ada@example.com')
  })
})

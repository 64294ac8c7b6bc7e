/**
 * The authorization server end to end on SQLite, with openid-client as the relying party: discovery,
 * a native app on a loopback redirect with PKCE, the site's sign-in and the consent page, its access
 * token read by `auth()` and `requireScopes()`, refresh token rotation, consent remembered, a
 * first-party client, client credentials, the device flow, userinfo, and the "apps with access" page.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { authorize, Browser, MACHINE_SECRET, NATIVE_REDIRECT, oauth, pkce, relyingParty, signedInBrowser, startServerApp, WEB_REDIRECT, WEB_SECRET, type ServerApp } from './as-app.js'

const server = await findDatabaseServer('sqlite')

/** A native client's authorization request (PKCE S256), and what it needs to redeem the code. */
async function nativeRequest(app: ServerApp, scope = 'openid email offline_access reports:read', redirectUri = 'http://127.0.0.1:53124/callback') {
  const config = await relyingParty(app, 'cli')
  const { verifier, challenge } = await pkce()
  const state = oauth.randomState()
  const url = oauth.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope, code_challenge: challenge, code_challenge_method: 'S256', state })
  return { config, verifier, state, url, redirectUri }
}

describe('the authorization server', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: ServerApp
  beforeAll(async () => {
    app = await startServerApp(db.knex)
  })

  it('publishes its metadata: OAuth 2.1 code flow with S256 only, RFC 9207 iss, the device flow, client credentials', async () => {
    const response = await fetch(`${app.issuer}/.well-known/openid-configuration`)
    expect(response.status).toBe(200)
    const metadata = (await response.json()) as Record<string, unknown>
    expect(metadata).toMatchObject({
      issuer: app.issuer,
      authorization_endpoint: `${app.issuer}/auth`,
      token_endpoint: `${app.issuer}/token`,
      jwks_uri: `${app.issuer}/jwks`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      id_token_signing_alg_values_supported: ['ES256'],
    })
    expect(metadata['grant_types_supported']).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']))
    expect(metadata['device_authorization_endpoint']).toBe(`${app.issuer}/device/auth`)
    expect(metadata['dpop_signing_alg_values_supported']).toEqual(expect.arrayContaining(['ES256']))
    const jwks = (await (await fetch(`${app.issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] }
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
    expect(jwks.keys[0]).not.toHaveProperty('d')
  })

  it('signs a native app in on a loopback redirect: site sign-in, consent, tokens; its access token is read by auth()', async () => {
    const visitor = new Browser()
    const request = await nativeRequest(app)
    // Not signed in to the site: the authorization goes to the sign-in page, with the way back.
    const first = await visitor.follow(await visitor.request(request.url.href))
    expect(first.status).toBe(200)
    expect(first.url).toContain('/api/auth/signin?callbackUrl=')
    expect(decodeURIComponent(first.url)).toContain('/api/auth/oauth-interaction/')
    const browser = await signedInBrowser(app, 'ada@example.com')
    const back = await authorize(browser, request.url)
    expect(back.origin).toBe('http://127.0.0.1:53124')
    expect(back.searchParams.get('iss')).toBe(app.issuer)
    const tokens = await oauth.authorizationCodeGrant(request.config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state })
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.refresh_token).toEqual(expect.any(String))
    const claims = tokens.claims()!
    const ada = await app.adapter.getUserByEmail('ada@example.com')
    expect(claims).toMatchObject({ iss: app.issuer, aud: 'cli', sub: ada!.id, email: 'ada@example.com', email_verified: true })

    const reports = await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(reports.status).toBe(200)
    expect(reports.headers.get('set-cookie')).toBeNull()
    const { auth } = (await reports.json()) as { auth: Record<string, unknown> }
    expect(auth).toMatchObject({ type: 'bearer', client: { id: 'cli' }, scopes: ['reports:read'], user: { id: ada!.id, email: 'ada@example.com' } })
    // Its scopes are what it may do: writing is refused.
    const write = await fetch(`${app.origin}/api/reports`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(write.status).toBe(403)
    expect(write.headers.get('www-authenticate')).toContain('error="insufficient_scope"')
  })

  it('remembers the consent per user and client: the next authorization goes straight back, in another browser too', async () => {
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const request = async () => oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid email', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256' })
    await authorize(await signedInBrowser(app, 'grace@example.com'), await request())
    const back = await authorize(await signedInBrowser(app, 'grace@example.com'), await request(), { consent: 'none' })
    expect(back.searchParams.get('code')).toEqual(expect.any(String))
  })

  it('asks a native public client for consent every time (RFC 8252 §8.6: another app can claim its redirect)', async () => {
    const browser = await signedInBrowser(app, 'grace@example.com')
    await authorize(browser, (await nativeRequest(app)).url)
    await expect(authorize(browser, (await nativeRequest(app)).url, { consent: 'none' })).rejects.toThrow('Allow Acme CLI?')
  })

  it('rotates the refresh token on each use; the old one replayed ends the whole grant', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const request = await nativeRequest(app)
    const tokens = await oauth.authorizationCodeGrant(request.config, await authorize(browser, request.url), { pkceCodeVerifier: request.verifier, expectedState: request.state })
    const refreshed = await oauth.refreshTokenGrant(request.config, tokens.refresh_token!)
    expect(refreshed.refresh_token).toEqual(expect.any(String))
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(200)
    // The first refresh token again (stolen, say): refused, and the grant ends with everything issued under it.
    await expect(oauth.refreshTokenGrant(request.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    await expect(oauth.refreshTokenGrant(request.config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    const after = await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('asks no consent of a first-party client', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const config = await relyingParty(app, 'first', WEB_SECRET)
    const { verifier, challenge } = await pkce()
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: 'https://dashboard.example.com/callback', scope: 'openid profile', code_challenge: challenge, code_challenge_method: 'S256' })
    const back = await authorize(browser, url, { consent: 'none' })
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const ada = await app.adapter.getUserByEmail('ada@example.com')
    expect(tokens.claims()).toMatchObject({ aud: 'first', sub: ada!.id })
    expect(await oauth.fetchUserInfo(config, tokens.access_token, ada!.id)).toMatchObject({ name: 'ada' })
  })

  it('sends access_denied back when the user presses Deny', async () => {
    const browser = await signedInBrowser(app, 'deny@example.com')
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { challenge } = await pkce()
    const state = oauth.randomState()
    const back = await authorize(browser, oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', state }), { consent: 'deny' })
    expect(`${back.origin}${back.pathname}`).toBe(WEB_REDIRECT)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe(state)
  })

  it('gives a machine client its own token by client credentials: req.auth has its client and no user', async () => {
    const config = await relyingParty(app, 'machine', MACHINE_SECRET)
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'reports:read', resource: `${app.origin}/` })
    const reports = await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(reports.status).toBe(200)
    expect(((await reports.json()) as { auth: unknown }).auth).toMatchObject({ type: 'bearer', client: { id: 'machine' }, user: null, scopes: ['reports:read'] })
  })

  it('signs a CLI in with the device flow: the user enters its code on the site, signs in, consents; the CLI polls for its tokens', async () => {
    const config = await relyingParty(app, 'cli')
    const device = await oauth.initiateDeviceAuthorization(config, { scope: 'openid reports:read' })
    expect(device.verification_uri).toBe(`${app.issuer}/device`)
    const browser = await signedInBrowser(app, 'ada@example.com')
    const page = await browser.request(device.verification_uri)
    expect(page.status).toBe(200)
    const entered = await browser.submitForm(page, { user_code: device.user_code })
    expect(entered.status).toBe(200)
    const confirmed = await browser.submitForm(entered)
    const done = await browser.follow(confirmed)
    // The consent page (the CLI is no first-party client), then the device's success page.
    const form = await browser.formOf(done)
    form.body.set('decision', 'allow')
    const success = await browser.follow(await browser.navigate(form))
    expect(success.status).toBe(200)
    expect(await success.text()).toContain('Device connected')
    const tokens = await oauth.pollDeviceAuthorizationGrant(config, device)
    const reports = await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(((await reports.json()) as { auth: unknown }).auth).toMatchObject({ type: 'bearer', client: { id: 'cli' }, user: { email: 'ada@example.com' } })
  })

  it('answers userinfo for a token of OpenID Connect scopes alone', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const request = await nativeRequest(app, 'openid email')
    const tokens = await oauth.authorizationCodeGrant(request.config, await authorize(browser, request.url), { pkceCodeVerifier: request.verifier, expectedState: request.state })
    const ada = await app.adapter.getUserByEmail('ada@example.com')
    expect(await oauth.fetchUserInfo(request.config, tokens.access_token, ada!.id)).toMatchObject({ sub: ada!.id, email: 'ada@example.com' })
  })

  it('lists the apps with access on /oauth-apps and removes one: its tokens stop at once', async () => {
    const browser = await signedInBrowser(app, 'apps@example.com')
    const request = await nativeRequest(app)
    const tokens = await oauth.authorizationCodeGrant(request.config, await authorize(browser, request.url), { pkceCodeVerifier: request.verifier, expectedState: request.state })
    const listed = (await (await browser.request(`${app.origin}/api/auth/oauth-apps`, { headers: { accept: 'application/json' } })).json()) as { apps: { clientId: string; name: string; scopes: string[] }[] }
    expect(listed.apps).toEqual([expect.objectContaining({ clientId: 'cli', name: 'Acme CLI', scopes: expect.arrayContaining(['openid', 'email', 'reports:read']) })])
    const page = await browser.request(`${app.origin}/api/auth/oauth-apps`)
    expect(await page.text()).toContain('Acme CLI')
    const removed = await browser.request(`${app.origin}/api/auth/oauth-apps/revoke`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin), clientId: 'cli' }) })
    expect(removed.headers.get('location')).toContain('/api/auth/oauth-apps?notice=removed')
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    await expect(oauth.refreshTokenGrant(request.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('ends the apps\' access when the user signs out everywhere', async () => {
    const browser = await signedInBrowser(app, 'everywhere@example.com')
    const request = await nativeRequest(app)
    const tokens = await oauth.authorizationCodeGrant(request.config, await authorize(browser, request.url), { pkceCodeVerifier: request.verifier, expectedState: request.state })
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
    const ended = await browser.request(`${app.origin}/api/auth/sessions/signout-everywhere`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin) }) })
    expect(ended.status).toBeLessThan(400)
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    await expect(oauth.refreshTokenGrant(request.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('asks for a new sign-in when the client says prompt=login, and gives the ID token that sign-in\'s auth_time', async () => {
    const browser = await signedInBrowser(app, 'fresh@example.com')
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { verifier, challenge } = await pkce()
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', prompt: 'login', code_challenge: challenge, code_challenge_method: 'S256' })
    const signInPage = await browser.follow(await browser.request(url.href))
    expect(signInPage.url).toContain('/api/auth/signin?callbackUrl=')
    const callbackUrl = new URL(signInPage.url).searchParams.get('callbackUrl')!
    const before = Math.floor(Date.now() / 1000)
    const signedIn = await browser.request(`${app.origin}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin), email: 'fresh@example.com', password: 'pw', callbackUrl }) })
    expect(signedIn.headers.get('location')).toBe(callbackUrl)
    const back = await authorize(browser, callbackUrl)
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    expect(tokens.claims()!.auth_time).toBeGreaterThanOrEqual(before)
  })

  it('signs out of the site too when the user signs out at the provider (RP-initiated logout), and goes back to the app', async () => {
    const browser = await signedInBrowser(app, 'logout@example.com')
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { verifier, challenge } = await pkce()
    const back = await authorize(browser, oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }))
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const logoutUrl = oauth.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://web.example.com/' })
    const question = await browser.request(logoutUrl.href)
    expect(question.status).toBe(200)
    const answered = await browser.submitForm(question, { logout: 'yes' })
    expect(answered.status).toBe(303)
    expect(answered.headers.get('location')).toBe('https://web.example.com/')
    expect(await (await browser.request(`${app.origin}/me`)).json()).toBeNull()
  })
})

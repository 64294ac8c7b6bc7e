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
})

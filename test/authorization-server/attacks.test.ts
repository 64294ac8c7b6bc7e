/**
 * The authorization server under attack, on SQLite: a code used twice (one after the other, and two
 * requests racing), a code for another client or redirect URI, PKCE missing or `plain`, redirect
 * URIs that would be open redirects, consent skipped, the interaction cookie from another browser,
 * CSRF on the consent form, HEAD on the interaction page, a token for another API, a forged token,
 * a token after its user was deleted, and a bearer token beside a session cookie.
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { authorize, Browser, oauth, pkce, relyingParty, signedInBrowser, startServerApp, WEB_REDIRECT, WEB_SECRET, type ServerApp } from './as-app.js'

const server = await findDatabaseServer('sqlite')
const LOOPBACK = 'http://127.0.0.1:53124/callback'

describe('the authorization server refuses', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: ServerApp
  beforeAll(async () => {
    app = await startServerApp(db.knex, { authorizationServer: { scopes: ['reports:read'], resources: { 'https://api.other.example/': { scopes: ['other:read'] } }, clients: [
      { client_id: 'cli', client_name: 'Acme CLI', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/callback'] },
      { client_id: 'web', client_name: 'Partner Web', client_secret: WEB_SECRET, redirect_uris: [WEB_REDIRECT] },
    ] } })
  })

  /** A code for the native client, with what redeems it. */
  async function nativeCode(email = 'ada@example.com', scope = 'openid reports:read') {
    const config = await relyingParty(app, 'cli')
    const { verifier, challenge } = await pkce()
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: LOOPBACK, scope, code_challenge: challenge, code_challenge_method: 'S256' })
    const browser = await signedInBrowser(app, email)
    return { config, verifier, back: await authorize(browser, url), browser }
  }

  /** The token endpoint's answer to a raw code exchange. */
  async function exchange(fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${app.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it('a code used twice: the second exchange fails and the grant of the first ends', async () => {
    const { config, verifier, back } = await nativeCode()
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const again = await exchange({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: 'cli', code_verifier: verifier })
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
  })

  it('a code sent by two requests at once: exactly one gets tokens', async () => {
    const { verifier, back } = await nativeCode()
    const fields = { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: 'cli', code_verifier: verifier }
    const answers = await Promise.all([exchange(fields), exchange(fields), exchange(fields)])
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1)
    expect(answers.filter((answer) => answer.body['error'] === 'invalid_grant')).toHaveLength(2)
  })

  it('a code redeemed by another client, or with another redirect URI, or without its verifier', async () => {
    const { verifier, back } = await nativeCode()
    const code = back.searchParams.get('code')!
    const basic = `Basic ${Buffer.from(`web:${WEB_SECRET}`).toString('base64')}`
    expect(await exchange({ grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier }, { authorization: basic })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const second = await nativeCode()
    expect(await exchange({ grant_type: 'authorization_code', code: second.back.searchParams.get('code')!, redirect_uri: 'http://127.0.0.1:53124/other', client_id: 'cli', code_verifier: second.verifier })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const third = await nativeCode()
    expect(await exchange({ grant_type: 'authorization_code', code: third.back.searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: 'cli' })).toMatchObject({ status: 400 })
    expect(await exchange({ grant_type: 'authorization_code', code: third.back.searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: 'cli', code_verifier: 'x'.repeat(43) })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })

  it('an authorization request without PKCE, or with plain', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const base = { client_id: 'cli', response_type: 'code', redirect_uri: LOOPBACK, scope: 'openid' }
    const missing = await authorize(browser, `${app.issuer}/auth?${new URLSearchParams(base)}`, { consent: 'none' })
    expect(missing.searchParams.get('error')).toBe('invalid_request')
    expect(missing.searchParams.get('code')).toBeNull()
    const plain = await authorize(browser, `${app.issuer}/auth?${new URLSearchParams({ ...base, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' })}`, { consent: 'none' })
    expect(plain.searchParams.get('error')).toBe('invalid_request')
    expect(plain.searchParams.get('code')).toBeNull()
  })

  it('redirect URIs that would be open redirects: never redirected to, a page says why', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { challenge } = await pkce()
    for (const redirect of ['https://evil.example/callback', 'http://127.0.0.1.evil.example/callback', 'http://127.0.0.1:8080/callback/../evil', 'http://localhost.evil.example/callback', 'http://127.0.0.1:8080/callback?next=https://evil.example']) {
      const query = new URLSearchParams({ client_id: 'cli', response_type: 'code', redirect_uri: redirect, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' })
      const answer = await browser.request(`${app.issuer}/auth?${query}`)
      expect([redirect, answer.status]).toEqual([redirect, 400])
      expect(answer.headers.get('location')).toBeNull()
      expect(await answer.text()).toContain('redirect_uri')
    }
  })

  it('consent skipped: going to the resume URL without pressing Allow asks again, and gives no code', async () => {
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { challenge } = await pkce()
    const browser = await signedInBrowser(app, 'skip@example.com')
    const start = await browser.follow(await browser.request(oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }).href))
    expect(await start.text()).toContain('Allow Partner Web?')
    const uid = new URL(start.url).pathname.split('/').pop()!
    const resumed = await browser.follow(await browser.request(`${app.issuer}/auth/${uid}`))
    expect(resumed.headers.get('location') ?? '').not.toContain('code=')
    expect(resumed.url).toContain('/api/auth/oauth-interaction/')
  })

  it('the interaction page in another browser (a link passed on): it has ended there, whoever is signed in', async () => {
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { challenge } = await pkce()
    const victim = await signedInBrowser(app, 'victim@example.com')
    const start = await victim.follow(await victim.request(oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }).href))
    const attacker = await signedInBrowser(app, 'attacker@example.com')
    const stolen = await attacker.request(start.url)
    expect(stolen.status).toBe(400)
    expect(await stolen.text()).toContain('This sign-in request has ended')
    const form = await victim.formOf(await victim.request(start.url))
    form.body.set('decision', 'allow')
    // Posted from the attacker's browser with the victim's form: refused (the CSRF token and the
    // interaction cookie are the victim's), and nothing reaches the client.
    const posted = await attacker.navigate(form)
    expect(posted.headers.get('location') ?? '').not.toContain(WEB_REDIRECT)
    expect(posted.headers.get('location') ?? '').not.toContain('/oauth/auth/')
  })

  it('the consent form without its CSRF token, or from another site', async () => {
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { challenge } = await pkce()
    const browser = await signedInBrowser(app, 'csrf@example.com')
    const page = await browser.follow(await browser.request(oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }).href))
    const form = await browser.formOf(page)
    form.body.delete('csrfToken')
    form.body.set('decision', 'allow')
    const forged = await browser.navigate(form)
    expect(forged.headers.get('location') ?? '').not.toContain(WEB_REDIRECT)
    const crossSite = await browser.request(form.url, { body: new URLSearchParams({ decision: 'allow' }), headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } })
    expect(crossSite.headers.get('location') ?? '').not.toContain(WEB_REDIRECT)
  })

  it('HEAD on the interaction page changes nothing', async () => {
    const config = await relyingParty(app, 'web', WEB_SECRET)
    const { challenge } = await pkce()
    const browser = await signedInBrowser(app, 'head@example.com')
    const started = await browser.request(oauth.buildAuthorizationUrl(config, { redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }).href)
    const interaction = new URL(started.headers.get('location')!, app.origin).href
    const head = await browser.request(interaction, { method: 'HEAD' })
    expect(head.status).toBe(200)
    // The login step was not given by the HEAD: the GET still does it, and the consent page follows.
    const page = await browser.follow(await browser.request(interaction))
    expect(await page.text()).toContain('Allow Partner Web?')
  })

  it('an access token for another API, a forged one, a malformed one', async () => {
    const config = await relyingParty(app, 'cli')
    const { verifier, challenge } = await pkce()
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: LOOPBACK, scope: 'openid other:read', resource: 'https://api.other.example/', code_challenge: challenge, code_challenge_method: 'S256' })
    const tokens = await oauth.authorizationCodeGrant(config, await authorize(await signedInBrowser(app, 'ada@example.com'), url), { pkceCodeVerifier: verifier })
    const other = await fetch(`${app.origin}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(await other.json()).toBeNull()
    const reports = await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(reports.status).toBe(401)
    expect(reports.headers.get('www-authenticate')).toContain('another API')
    // The same claims signed by another key.
    const [header, payload] = tokens.access_token.split('.') as [string, string]
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), aud: `${app.origin}/` })).toString('base64url')
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const signature = sign('sha256', Buffer.from(`${header}.${forgedPayload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${header}.${forgedPayload}.${signature}` } })).status).toBe(401)
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${header}.${forgedPayload}.${tokens.access_token.split('.')[2]}` } })).status).toBe(401)
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' } })).status).toBe(401)
  })

  it('a token after its user was deleted in another process (the adapter called directly): refused within the grant check\'s 5 s', async () => {
    const { config, verifier, back } = await nativeCode('gone@example.com')
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
    const user = await app.adapter.getUserByEmail('gone@example.com')
    await app.adapter.deleteUser(user!.id)
    // deleteUser removed the user's records in its transaction; this process checked the grant just now and trusts that for 5 s.
    expect(await db.knex('OAuthRecord').where({ accountId: user!.id }).count({ n: '*' }).first()).toMatchObject({ n: 0 })
    await new Promise((resolve) => setTimeout(resolve, 5100))
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    await expect(oauth.refreshTokenGrant(config, tokens.refresh_token ?? 'none')).rejects.toMatchObject({ error: 'invalid_grant' })
  }, 15_000)

  it('never takes a request with a session cookie as a bearer one: the cookie is read, the token ignored', async () => {
    const { config, verifier, back, browser } = await nativeCode('cookie@example.com')
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const me = await browser.request(`${app.origin}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    const session = (await me.json()) as Record<string, unknown>
    expect(session['type']).toBeUndefined()
    expect(session).toMatchObject({ user: { email: 'cookie@example.com' } })
  })
})

void Browser

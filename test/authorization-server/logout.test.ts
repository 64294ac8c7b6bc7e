/**
 * Back-channel logout when the site ends a user's every session: an app the user signed in to through
 * the provider, with a `backchannel_logout_uri`, is sent a logout token (signed by the server, for that
 * app, naming the user and the provider session's sid) when the user signs out everywhere. The
 * provider's guard keeps its requests off private addresses: the logout URI of a client declared in
 * the config (the company's intranet app) is let through it, a stored client's is not.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { authorize, oauth, pkce, relyingParty, signedInBrowser, startServerApp, WEB_SECRET, type ServerApp } from './as-app.js'

const server = await findDatabaseServer('sqlite')
const REDIRECT = 'https://intranet.example.com/callback'

describe('back-channel logout', () => {
  const db = migratedDatabase(server)
  let receiver: Server
  let received: URLSearchParams[]
  let uri: string
  beforeAll(async () => {
    received = []
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk.toString()))
      req.on('end', () => {
        received.push(new URLSearchParams(body))
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    uri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/backchannel-logout`
  })
  afterAll(async () => {
    await closeAll()
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver.close(resolve))
  })

  async function appWith(): Promise<ServerApp> {
    const app = await startServerApp(db.knex, {
      authorizationServer: {
        clients: [{ client_id: 'intranet', client_name: 'Intranet', client_secret: WEB_SECRET, redirect_uris: [REDIRECT], backchannel_logout_uri: uri, backchannel_logout_session_required: true, first_party: true }],
      },
    })
    return app
  }

  /** ada signs in to `clientId` through the provider, then signs out everywhere on the site. */
  async function signInThenOutEverywhere(app: ServerApp, clientId = 'intranet', secret = WEB_SECRET): Promise<string> {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const config = await relyingParty(app, clientId, secret)
    const { verifier, challenge } = await pkce()
    const back = await authorize(browser, oauth.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }))
    await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const user = (await app.adapter.getUserByEmail('ada@example.com'))!
    const ended = await browser.request(`${app.origin}/api/auth/sessions/signout-everywhere`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin) }) })
    expect(ended.status).toBeLessThan(400)
    return user.id
  }

  it('sends a declared app a logout token for the user when they sign out everywhere, on a private address too', async () => {
    const app = await appWith()
    received.length = 0
    const userId = await signInThenOutEverywhere(app)
    expect(received).toHaveLength(1)
    const token = received[0]!.get('logout_token')!
    const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(`${app.issuer}/jwks`)), { issuer: app.issuer, audience: 'intranet' })
    expect(protectedHeader.typ).toBe('logout+jwt')
    expect(payload).toMatchObject({ sub: userId, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
    expect(typeof payload['sid']).toBe('string')
    expect(payload['nonce']).toBeUndefined()
  })

  it('sends nothing to a stored client\'s logout URI on a private address (the provider\'s guard)', async () => {
    const app = await appWith()
    const stored = await app.registerOAuthClient({ client_name: 'Partner', redirect_uris: [REDIRECT], backchannel_logout_uri: `${uri}/partner` })
    received.length = 0
    await signInThenOutEverywhere(app, stored.client_id, String(stored.client_secret))
    expect(received).toHaveLength(0)
    expect(app.logger.codes('warn')).toContain('AuthorizationServerLogoutFailed')
  })
})

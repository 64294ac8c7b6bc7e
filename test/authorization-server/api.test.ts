/**
 * The authorization server's server-side functions on SQLite: a client registered by
 * `registerOAuthClient()` signs a user in (its metadata checked by oidc-provider, its secret
 * generated), `removeOAuthClient()` stops it; `listAuthorizedApps(req)` and `revokeAuthorizedApp(req)`
 * for an app's own account pages.
 */
import express from 'express'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { authorize, oauth, pkce, relyingParty, signedInBrowser, startServerApp, type ServerApp } from './as-app.js'

const server = await findDatabaseServer('sqlite')

describe('the authorization server functions', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: ServerApp
  beforeAll(async () => {
    app = await startServerApp(db.knex)
    app.app.get('/account/apps', async (req, res) => void res.json(await app.listAuthorizedApps(req)))
    app.app.post('/account/apps/remove', express.urlencoded({ extended: false }), async (req, res, next) => {
      try {
        await app.revokeAuthorizedApp(req, String((req.body as { clientId?: string }).clientId))
        res.status(204).end()
      } catch (error) {
        next(error)
      }
    })
  })

  it('registers a client that then signs users in, with a generated secret; refuses bad metadata and a taken id', async () => {
    const client = await app.registerOAuthClient({ client_name: 'Partner Reports', redirect_uris: ['https://partner.example/callback'] })
    expect(client.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const config = await relyingParty(app, client.client_id, client.client_secret)
    const { verifier, challenge } = await pkce()
    const back = await authorize(await signedInBrowser(app, 'ada@example.com'), oauth.buildAuthorizationUrl(config, { redirect_uri: 'https://partner.example/callback', scope: 'openid reports:read', code_challenge: challenge, code_challenge_method: 'S256' }))
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)

    await expect(app.registerOAuthClient({ client_name: 'Bad', redirect_uris: ['not a url'] })).rejects.toMatchObject({ type: 'AuthorizationServer', code: 'invalid_client_metadata' })
    await expect(app.registerOAuthClient({ client_id: 'cli', redirect_uris: ['https://x.example/cb'] })).rejects.toMatchObject({ code: 'client_exists' })
    await expect(app.registerOAuthClient({ client_id: client.client_id, redirect_uris: ['https://x.example/cb'] })).rejects.toMatchObject({ code: 'client_exists' })

    await app.removeOAuthClient(client.client_id)
    await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toThrow('WWW-Authenticate')
    await expect(app.removeOAuthClient(client.client_id)).rejects.toMatchObject({ code: 'not_found' })
  })

  it('lists and revokes the signed-in user\'s apps from the app\'s own routes (CSRF-checked)', async () => {
    const browser = await signedInBrowser(app, 'grace@example.com')
    const config = await relyingParty(app, 'cli')
    const { verifier, challenge } = await pkce()
    const back = await authorize(browser, oauth.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:5000/callback', scope: 'openid reports:read', code_challenge: challenge, code_challenge_method: 'S256' }))
    const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier })
    const apps = (await (await browser.request(`${app.origin}/account/apps`)).json()) as { clientId: string }[]
    expect(apps.map((entry) => entry.clientId)).toEqual(['cli'])
    const noToken = await browser.request(`${app.origin}/account/apps/remove`, { body: new URLSearchParams({ clientId: 'cli' }) })
    expect(noToken.status).toBeGreaterThanOrEqual(400)
    const removed = await browser.request(`${app.origin}/account/apps/remove`, { body: new URLSearchParams({ clientId: 'cli', csrfToken: await csrfOf(browser, app.origin) }) })
    expect(removed.status).toBe(204)
    expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    expect(await (await browser.request(`${app.origin}/account/apps`)).json()).toEqual([])
    await expect(app.listAuthorizedApps(request(app.app).get('/') as never)).rejects.toThrow()
  })
})

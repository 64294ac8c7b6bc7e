/**
 * The API key routes as an attacker reaches them: raw paths over node:http (fetch would normalise
 * them), HEAD on the routes that change keys, and a forged Host on the page's redirect. Each case
 * checks what a user relies on: no key is made, revoked or rotated without the owner's CSRF token,
 * and no answer sends the browser to another host.
 */
import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll, listenApp } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { rawRequest } from '../support/raw-http.js'
import { createKey, signedInBrowser, startKeysApp, withKey, type KeysApp } from './api-keys-app.js'

const server = await findDatabaseServer('sqlite')

describe('API key routes under attack', () => {
  const db = migratedDatabase(server)
  let app: KeysApp
  /** The same app on a server of its own, for raw requests (rawRequest takes a Server). */
  let raw: Server

  beforeAll(async () => {
    app = await startKeysApp(db.knex)
    raw = (await listenApp(app.app)).server
  })
  afterAll(closeAll)

  /** The Cookie header of a signed-in browser: its session and CSRF cookies. */
  async function signedInCookies(email: string) {
    const browser = await signedInBrowser(app, email)
    const cookie = ['authjs.session-token', 'authjs.csrf-token'].map((name) => `${name}=${browser.cookie(app.url, name)}`).join('; ')
    const userId = (await app.adapter.getUserByEmail(email))!.id
    return { browser, cookie, keys: async () => (await app.adapter.listApiKeys({ type: 'user', id: userId })).filter((key) => key.revokedAt === null) }
  }

  it('makes no key for a POST without the CSRF token on any spelling of the path', async () => {
    const { cookie, keys } = await signedInCookies('raw@example.com')
    const paths = ['/api/auth/api-keys', '/api/auth//api-keys', '/api/auth/api-keys/', '/api/auth/./api-keys', '/api/auth/x/../api-keys', '/api/auth/x/%2e%2e/api-keys', '/api/auth/%61pi-keys', '/api/auth/API-KEYS']
    for (const path of paths) {
      const response = await rawRequest(raw, path, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
        body: new URLSearchParams({ name: 'forged', scopes: 'reports:read' }).toString(),
      })
      expect([path, response.status]).not.toEqual([path, 201])
      expect(response.body).not.toMatch(/pc_live_[0-9A-Za-z]{38}/)
    }
    expect(await keys()).toEqual([])
  })

  it('HEAD on the routes that revoke and rotate changes nothing: the key still works, and no new one is made', async () => {
    const { browser, cookie, keys } = await signedInCookies('head@example.com')
    const { key, id } = await createKey(browser, app)
    for (const path of ['/api/auth/api-keys/revoke', '/api/auth/api-keys/rotate', '/api/auth/api-keys']) {
      const response = await rawRequest(raw, `${path}?id=${id}`, { method: 'HEAD', headers: { cookie } })
      expect(response.body).toBe('')
    }
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
    expect((await keys()).map((each) => each.id)).toEqual([id])
  })

  it('revokes nothing from a forged path whose query names the key', async () => {
    const { browser, cookie } = await signedInCookies('query@example.com')
    const { key, id } = await createKey(browser, app)
    for (const path of [`/api/auth/api-keys/revoke?id=${id}`, `/api/auth//api-keys/revoke?id=${id}`, `/api/auth/api-keys/%72evoke?id=${id}`]) {
      await rawRequest(raw, path, { method: 'POST', headers: { cookie, origin: app.url, 'content-type': 'application/x-www-form-urlencoded' }, body: `id=${id}` })
    }
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
  })
})

describe('API key page behind a forged Host', () => {
  const db = migratedDatabase(server)
  let app: KeysApp
  let raw: Server
  const previous = process.env.AUTH_URL

  beforeAll(async () => {
    // The deployment's own address: with it set, no Host header decides where a redirect goes.
    process.env.AUTH_URL = 'http://app.example'
    app = await startKeysApp(db.knex, { trustHost: false })
    raw = (await listenApp(app.app)).server
  })
  afterAll(async () => {
    if (previous === undefined) delete process.env.AUTH_URL
    else process.env.AUTH_URL = previous
    await closeAll()
  })

  it('sends a signed-out visitor to the sign-in page of the configured site, never of the Host sent', async () => {
    for (const host of ['evil.example', 'app.example.evil.example', 'evil.example:80']) {
      const response = await rawRequest(raw, '/api/auth/api-keys', { headers: { host, 'x-forwarded-host': 'evil.example' } })
      expect(response.status).toBe(302)
      expect(response.headers.location).not.toContain('evil.example')
      expect(response.headers.location).toMatch(/^http:\/\/app\.example\/api\/auth\/signin\?callbackUrl=/)
    }
  })
})

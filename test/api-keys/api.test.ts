/**
 * The server-side functions (`createApiKey`, `listApiKeys`, `revokeApiKey`, `rotateApiKey`) on the
 * app's own routes, CSRF-checked as the other functions that change state; the routes' CSRF checks,
 * HEAD, a cross-site POST, and the option's checks at init.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import express from 'express'
import knexFactory from 'knex'
import Portcullis from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { closeAll } from '../support/app-rig.js'
import { SECRET } from '../support/flow.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { createKey, postJson, signedInBrowser, startKeysApp, withKey, type KeysApp } from './api-keys-app.js'

const server = await findDatabaseServer('sqlite')

describe('API keys: server-side functions and routes', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: KeysApp
  beforeAll(async () => {
    app = await startKeysApp(db.knex)
    const form = express.urlencoded({ extended: false })
    // The app's own account page, through the server-side functions.
    app.app.post('/account/keys', form, async (req, res, next) => {
      try {
        res.status(201).json(await app.createApiKey(req, { name: String(req.body.name), scopes: ['deploy'], expiresIn: 3600, rateLimit: { max: 2, windowSeconds: 60 }, csrfToken: req.body.csrfToken }))
      } catch (error) {
        next(error)
      }
    })
    app.app.get('/account/keys', async (req, res, next) => void app.listApiKeys(req).then((keys) => res.json(keys), next))
    app.app.post('/account/keys/revoke', form, async (req, res, next) => void app.revokeApiKey(req, String(req.body.id), { csrfToken: req.body.csrfToken }).then(() => res.json({ ok: true }), next))
    app.app.post('/account/keys/rotate', form, async (req, res, next) => void app.rotateApiKey(req, String(req.body.id), { gracePeriod: 60, csrfToken: req.body.csrfToken }).then((key) => res.json(key), next))
    app.app.use((error: Error & { type?: string; code?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(400).json({ type: error.type, code: error.code }))
  })

  it('createApiKey refuses a browser request without the CSRF token, and makes the key with one', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const refused = await browser.request(`${app.url}/account/keys`, { body: new URLSearchParams({ name: 'Deploys' }) })
    expect(await refused.json()).toEqual({ type: 'MissingCSRF' })
    const made = await browser.request(`${app.url}/account/keys`, { body: new URLSearchParams({ name: 'Deploys', csrfToken: await csrfOf(browser, app.url) }), headers: { origin: app.url } })
    expect(made.status).toBe(201)
    const created = (await made.json()) as { key: string; id: string; scopes: string[]; rateLimit: unknown; expiresAt: string }
    expect(created).toMatchObject({ scopes: ['deploy'], rateLimit: { max: 2, windowSeconds: 60 } })
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(3500_000)
    // Its own rate limit holds.
    const statuses = await Promise.all([1, 2, 3].map(async () => (await withKey(`${app.url}/signed-in`, created.key)).status))
    expect(statuses.sort()).toEqual([200, 200, 429])
    const listed = (await (await browser.request(`${app.url}/account/keys`)).json()) as { id: string; display: string }[]
    expect(listed.map((key) => key.id)).toContain(created.id)
    expect(JSON.stringify(listed)).not.toContain(created.key)
  })

  it('revokeApiKey and rotateApiKey are CSRF-checked, and only touch the caller’s own keys', async () => {
    const ada = await signedInBrowser(app, 'ada@example.com')
    const bob = await signedInBrowser(app, 'bob@example.com')
    const { id, key } = await createKey(ada, app)
    expect(await (await ada.request(`${app.url}/account/keys/revoke`, { body: new URLSearchParams({ id }) })).json()).toEqual({ type: 'MissingCSRF' })
    const theirs = await bob.request(`${app.url}/account/keys/revoke`, { body: new URLSearchParams({ id, csrfToken: await csrfOf(bob, app.url) }), headers: { origin: app.url } })
    expect(await theirs.json()).toEqual({ type: 'ApiKey', code: 'not_found' })
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
    const rotated = (await (await ada.request(`${app.url}/account/keys/rotate`, { body: new URLSearchParams({ id, csrfToken: await csrfOf(ada, app.url) }), headers: { origin: app.url } })).json()) as { key: string }
    expect((await withKey(`${app.url}/reports`, rotated.key)).status).toBe(200)
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
    const revoked = await ada.request(`${app.url}/account/keys/revoke`, { body: new URLSearchParams({ id, csrfToken: await csrfOf(ada, app.url) }), headers: { origin: app.url } })
    expect(await revoked.json()).toEqual({ ok: true })
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(401)
  })

  it('refuses a key past maxKeysPerOwner with 409, but rotates a key at the limit', async () => {
    const limited = await startKeysApp(db.knex, { apiKeys: { scopes: ['reports:read'], maxKeysPerOwner: 2 } })
    const browser = await signedInBrowser(limited, 'hal@example.com')
    const first = await createKey(browser, limited)
    await createKey(browser, limited)
    const third = await postJson(browser, limited, 'api-keys', { name: 'third' })
    expect(third.status).toBe(409)
    expect(await third.json()).toMatchObject({ code: 'too_many_keys' })
    expect((await postJson(browser, limited, 'api-keys/rotate', { id: first.id })).status).toBe(201)
  })

  it('the routes refuse a POST without the CSRF token, or from another site', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const before = (await app.adapter.listApiKeys({ type: 'user', id: (await app.adapter.getUserByEmail('ada@example.com'))!.id })).length
    const noToken = await browser.request(`${app.url}/api/auth/api-keys`, { body: new URLSearchParams({ name: 'x' }) })
    expect(noToken.status).not.toBe(200)
    const crossSite = await browser.request(`${app.url}/api/auth/api-keys`, {
      body: new URLSearchParams({ name: 'x', csrfToken: await csrfOf(browser, app.url) }),
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    })
    expect(crossSite.status).not.toBe(200)
    expect((await app.adapter.listApiKeys({ type: 'user', id: (await app.adapter.getUserByEmail('ada@example.com'))!.id })).length).toBe(before)
  })

  it('HEAD on the page answers as GET and makes nothing; a signed-out visitor is sent to sign in, a JSON client gets 401', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const head = await browser.request(`${app.url}/api/auth/api-keys`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('cache-control')).toBe('no-store')
    const out = await fetch(`${app.url}/api/auth/api-keys`, { redirect: 'manual' })
    expect(out.status).toBe(302)
    expect(out.headers.get('location')).toContain('/api/auth/signin?callbackUrl=')
    expect((await fetch(`${app.url}/api/auth/api-keys`, { headers: { accept: 'application/json' } })).status).toBe(401)
  })

  it('answers the routes as unknown when apiKeys is off, and refuses options that cannot work at init', async () => {
    const db2 = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      const adapter = KnexAdapter(db2)
      const quiet = { warn: () => {}, error: () => {}, debug: () => {} }
      const off = Portcullis({ secret: SECRET, adapter, providers: [], logger: quiet })
      const plain = express().use('/api/auth', off.handlers)
      const { listenApp } = await import('../support/app-rig.js')
      const { origin } = await listenApp(plain)
      const answer = await fetch(`${origin}/api/auth/api-keys`)
      expect(answer.status).toBe(400)
      expect(await answer.text()).toContain('API keys are off')
      expect(() => Portcullis({ secret: SECRET, providers: [], apiKeys: true, logger: quiet })).toThrow(/apiKeys stores each key's hash: it needs an adapter/)
      expect(() => Portcullis({ secret: SECRET, adapter, providers: [], logger: quiet, apiKeys: { prefix: 'pc-live' } })).toThrow(/apiKeys.prefix must be/)
      expect(() => Portcullis({ secret: SECRET, adapter, providers: [], logger: quiet, apiKeys: { header: 'authorization' } })).toThrow(/apiKeys.header must be/)
      expect(() => Portcullis({ secret: SECRET, adapter, providers: [], logger: quiet, apiKeys: { rateLimit: { max: 0, windowSeconds: 60 } } })).toThrow(/apiKeys.rateLimit must be/)
      expect(() => Portcullis({ secret: SECRET, adapter: { ...adapter, getApiKeyByHash: undefined }, providers: [], apiKeys: true, logger: quiet })).toThrow(/the adapter has no getApiKeyByHash/)
    } finally {
      await db2.destroy()
    }
  })
})

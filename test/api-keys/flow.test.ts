/**
 * API keys end to end on SQLite: made by a signed-in user through the routes, used by `fetch` with no
 * cookies, refused when they should be (scopes, expiry, revocation, rotation past its grace, a
 * deleted owner, a key in the URL, a mangled key) and never in a log line.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { csrfOf } from '../password/password-app.js'
import { createKey, postJson, signedInBrowser, startKeysApp, withKey, type KeysApp } from './api-keys-app.js'

const server = await findDatabaseServer('sqlite')

describe('API keys', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: KeysApp
  beforeAll(async () => {
    app = await startKeysApp(db.knex)
  })

  it('authenticates a request with no cookie by its key: req.auth says apiKey, with the key and its owner', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { key, id, display } = await createKey(browser, app, { name: 'Reports job', metadata: { team: 'data' } })
    expect(key).toMatch(/^pc_live_[0-9A-Za-z]{38}$/)
    expect(display).toBe(`pc_live_${key.slice(8, 12)}…${key.slice(-4)}`)
    const me = await withKey(`${app.url}/me`, key)
    expect(me.headers.get('set-cookie')).toBeNull()
    const auth = (await me.json()) as Record<string, unknown>
    const user = await app.adapter.getUserByEmail('ada@example.com')
    expect(auth).toMatchObject({ type: 'apiKey', id, name: 'Reports job', scopes: ['reports:read'], owner: { type: 'user', id: user!.id }, user: { id: user!.id, email: 'ada@example.com' }, metadata: { team: 'data' } })
    // The x-api-key header works too.
    expect((await (await withKey(`${app.url}/me`, key, { header: 'x-api-key' })).json()) as { id?: string }).toMatchObject({ id })
  })

  it('stores only the SHA-256 of the key', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { key, id } = await createKey(browser, app)
    const row = (await db.knex('ApiKey').where({ id }).first()) as Record<string, unknown>
    expect(row.keyHash).toBe(createHash('sha256').update(key).digest('hex'))
    expect(JSON.stringify(row)).not.toContain(key.slice(8, 40))
  })

  it('enforces scopes: 403 insufficient_scope with WWW-Authenticate for a key without the scope, 401 for no key', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { key } = await createKey(browser, app, { scopes: ['reports:read'] })
    expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
    const write = await withKey(`${app.url}/reports`, key, { method: 'POST' })
    expect(write.status).toBe(403)
    expect(write.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="reports:write"')
    const none = await fetch(`${app.url}/reports`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    // A cookie session carries no scopes: its user acts for themselves.
    expect((await browser.request(`${app.url}/reports`, { method: 'POST' })).status).toBe(201)
  })

  it('refuses a scope the app does not offer, and a key cannot create keys', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const refused = await postJson(browser, app, 'api-keys', { name: 'x', scopes: ['admin'] })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: 'ApiKey', code: 'invalid_input' })
    const { key } = await createKey(browser, app)
    const asKey = await fetch(`${app.url}/api/auth/api-keys`, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } })
    expect(asKey.status).toBe(401)
  })

  it('refuses a revoked key at once, and an expired key', async () => {
    const browser = await signedInBrowser(app, 'bob@example.com')
    const revoked = await createKey(browser, app)
    expect((await withKey(`${app.url}/reports`, revoked.key)).status).toBe(200)
    expect((await postJson(browser, app, 'api-keys/revoke', { id: revoked.id })).status).toBe(200)
    const afterRevoke = await withKey(`${app.url}/reports`, revoked.key)
    expect(afterRevoke.status).toBe(401)
    expect(afterRevoke.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
    expect(await (await withKey(`${app.url}/me`, revoked.key)).json()).toBeNull()

    const expired = await createKey(browser, app)
    await db.knex('ApiKey').where({ id: expired.id }).update({ expiresAt: new Date(Date.now() - 1000) })
    // (Not yet used, so not in the opened-key cache.)
    expect((await withKey(`${app.url}/reports`, expired.key)).status).toBe(401)
  })

  it('stops the keys of a deleted user at the next lookup', async () => {
    const uncached = await startKeysApp(db.knex, { apiKeys: { scopes: ['reports:read'], cacheSeconds: 0 } })
    const browser = await signedInBrowser(uncached, 'carol@example.com')
    const { key } = await createKey(browser, uncached)
    expect((await withKey(`${uncached.url}/reports`, key)).status).toBe(200)
    const user = await uncached.adapter.getUserByEmail('carol@example.com')
    // Not through deleteUser (which deletes the keys too): the lookup's join alone refuses them.
    await db.knex('User').where({ id: user!.id }).del()
    expect((await withKey(`${uncached.url}/reports`, key)).status).toBe(401)
  })

  it('forgets the cached keys of a user who deletes their account: refused at once, the cache on', async () => {
    const deleting = await startKeysApp(db.knex, { apiKeys: { scopes: ['reports:read'], cacheSeconds: 3600 }, account: { sendMail: async () => {} } })
    const browser = await signedInBrowser(deleting, 'erin@example.com')
    const { key } = await createKey(browser, deleting)
    const other = await createKey(await signedInBrowser(deleting, 'fay@example.com'), deleting)
    // Both opened, so in the cache.
    expect((await withKey(`${deleting.url}/reports`, key)).status).toBe(200)
    expect((await withKey(`${deleting.url}/reports`, other.key)).status).toBe(200)
    const lookups = deleting.lookups.length
    const deleted = await browser.request(`${deleting.url}/api/auth/account/delete`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, deleting.url), confirm: 'yes' }) })
    expect(deleted.status).toBe(302)
    expect(await deleting.adapter.getUserByEmail('erin@example.com')).toBeNull()
    expect((await withKey(`${deleting.url}/reports`, key)).status).toBe(401)
    // Looked up again (and not found), while another user's key is still served from the cache.
    expect(deleting.lookups.length).toBe(lookups + 1)
    expect((await withKey(`${deleting.url}/reports`, other.key)).status).toBe(200)
    expect(deleting.lookups.length).toBe(lookups + 1)
  })

  it('rotates: the new key works, the old one within its grace and not past it', async () => {
    const browser = await signedInBrowser(app, 'dan@example.com')
    const old = await createKey(browser, app, { scopes: ['reports:read', 'deploy'] })
    const graced = await postJson(browser, app, 'api-keys/rotate', { id: old.id, gracePeriod: 3600 })
    expect(graced.status).toBe(201)
    const rotated = (await graced.json()) as { key: string; id: string; scopes: string[] }
    expect(rotated.scopes).toEqual(['reports:read', 'deploy'])
    expect((await withKey(`${app.url}/reports`, rotated.key)).status).toBe(200)
    expect((await withKey(`${app.url}/reports`, old.key)).status).toBe(200)
    // Past the grace: its expiry is an hour ahead; set it as the clock would find it then.
    await db.knex('ApiKey').where({ id: old.id }).update({ expiresAt: new Date(Date.now() - 1) })
    const other = await startKeysApp(db.knex)
    expect((await withKey(`${other.url}/reports`, old.key)).status).toBe(401)
    // Rotating with no grace stops the old key now, in this process at once.
    const again = (await (await postJson(browser, app, 'api-keys/rotate', { id: rotated.id })).json()) as { key: string }
    expect((await withKey(`${app.url}/reports`, rotated.key)).status).toBe(401)
    expect((await withKey(`${app.url}/reports`, again.key)).status).toBe(200)
  })

  it('refuses a key in the query string with 400 invalid_request, without a lookup, and says so in the log without the key', async () => {
    const browser = await signedInBrowser(app, 'eve@example.com')
    const { key } = await createKey(browser, app)
    const lookups = app.calls.get('getApiKeyByHash') ?? 0
    for (const query of [`api_key=${key}`, `token=${encodeURIComponent(key)}`]) {
      const response = await fetch(`${app.url}/reports?${query}`)
      expect(response.status).toBe(400)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_request"/)
      // Even with the key in the header too.
      expect((await fetch(`${app.url}/reports?${query}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(400)
    }
    expect(app.calls.get('getApiKeyByHash') ?? 0).toBe(lookups)
    expect(app.logger.codes('warn')).toContain('ApiKeyInUrl')
  })

  it('refuses a key with one character changed by its checksum, before any lookup', async () => {
    const browser = await signedInBrowser(app, 'eve@example.com')
    const { key } = await createKey(browser, app)
    const lookups = app.calls.get('getApiKeyByHash') ?? 0
    for (const position of [8, 20, key.length - 8, key.length - 1]) {
      const char = key[position]!
      const changed = key.slice(0, position) + (char === 'a' ? 'b' : 'a') + key.slice(position + 1)
      expect((await withKey(`${app.url}/reports`, changed)).status).toBe(401)
    }
    expect((await withKey(`${app.url}/reports`, key.slice(0, -1))).status).toBe(401)
    expect(app.calls.get('getApiKeyByHash') ?? 0).toBe(lookups)
  })

  it('looks a key up by the SHA-256 of the whole key: no early exit on a shared prefix or start', async () => {
    const browser = await signedInBrowser(app, 'eve@example.com')
    const { key } = await createKey(browser, app)
    const { checksum } = await import('../../src/features/api-keys/format.js')
    const forged = (random: string) => `pc_live_${random}${checksum(`pc_live_${random}`)}`
    // Well-formed keys: one sharing the real key's first 28 random characters, one sharing nothing.
    const near = forged(key.slice(8, 36) + (key[36] === 'A' ? 'BBBB' : 'AAAA'))
    const far = forged('Z'.repeat(32))
    const before = app.lookups.length
    for (const candidate of [near, far]) expect((await withKey(`${app.url}/reports`, candidate)).status).toBe(401)
    // Each a single query, by the full hash; nothing is looked up by a prefix or the display part.
    expect(app.lookups.slice(before)).toEqual([near, far].map((candidate) => createHash('sha256').update(candidate).digest('hex')))
  })

  it('writes lastUsedAt once, not on every request', async () => {
    const browser = await signedInBrowser(app, 'fay@example.com')
    const { key, id } = await createKey(browser, app)
    const touches = app.calls.get('touchApiKey') ?? 0
    for (let i = 0; i < 5; i++) expect((await withKey(`${app.url}/reports`, key)).status).toBe(200)
    expect((app.calls.get('touchApiKey') ?? 0) - touches).toBe(1)
    const { until } = await import('../support/time-limits.js')
    await until('lastUsedAt written', async () => ((await db.knex('ApiKey').where({ id }).first()) as { lastUsedAt: unknown }).lastUsedAt !== null)
  })

  it('never writes a key into a log line', async () => {
    const browser = await signedInBrowser(app, 'gus@example.com')
    const { key, id } = await createKey(browser, app)
    await withKey(`${app.url}/reports`, key)
    await fetch(`${app.url}/reports?k=${key}`)
    await withKey(`${app.url}/reports`, `${key.slice(0, -1)}x`)
    await postJson(browser, app, 'api-keys/rotate', { id })
    const secret = key.slice(8, 40)
    const lines = app.logger.lines.map((line) => JSON.stringify(line.message))
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).not.toContain(secret)
  })
})

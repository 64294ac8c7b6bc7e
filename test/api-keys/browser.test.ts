/**
 * API keys in a real browser: a user signed in with Chromium (playwright-core) makes a key on the
 * built-in page, copies it off the page ("you will not see it again"), and a script with no cookies
 * uses it with `fetch`; revoking it on the page stops it. Screenshots of the page (light, dark, a
 * phone's width) go to os.tmpdir() for a person to look at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'

const SECRET = 'api-keys-browser-suite-secret-0123456789'
export const SCREENSHOTS = { light: join(tmpdir(), 'portcullis-api-keys-light.png'), dark: join(tmpdir(), 'portcullis-api-keys-dark.png'), phone: join(tmpdir(), 'portcullis-api-keys-phone.png') }

describeWithChromium('API keys in Chromium: made on the page, used by fetch without cookies', () => {
  const rig = useBrowserRig()
  let db: Knex
  let app: AuthApp
  beforeAll(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const adapter = KnexAdapter(db)
    await adapter.createUser({ email: 'ada@example.com', emailVerified: null, name: 'Ada', image: null })
    app = authApp({
      secret: SECRET,
      adapter,
      providers: [Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
      apiKeys: { scopes: ['reports:read', 'reports:write'] },
    })
    app.app.get('/reports', app.requireScopes('reports:read'), (req, res) => void res.json({ owner: (req as { auth?: { user?: { email?: string } } }).auth?.user?.email }))
    rig.serve(app.app)
  })
  afterAll(() => db?.destroy())

  it('shows a new key once; fetch with it and no cookie is let in; revoking it on the page shuts it out', async () => {
    const context = await rig.newContext()
    const page = await context.newPage()
    const { csrfToken } = (await (await context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const signIn = await context.request.post(`${rig.origin}/api/auth/callback/credentials`, { form: { csrfToken, email: 'ada@example.com', password: 'pw' }, maxRedirects: 0 })
    expect(signIn.status()).toBe(302)

    await page.goto(`${rig.origin}/api/auth/api-keys`)
    await expect(page.locator('h1').innerText()).resolves.toBe('API keys')
    await page.getByLabel('Name').fill('Nightly report')
    await page.getByLabel('reports:read').check()
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.waitForSelector('[data-key]')
    await expect(page.locator('[data-created-key] strong').innerText()).resolves.toContain('you will not see it again')
    const key = (await page.locator('[data-key]').innerText()).trim()
    expect(key).toMatch(/^pc_live_[0-9A-Za-z]{38}$/)
    await page.screenshot({ path: SCREENSHOTS.light, fullPage: true })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: SCREENSHOTS.dark, fullPage: true })
    await page.emulateMedia({ colorScheme: 'light' })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: SCREENSHOTS.phone, fullPage: true })

    // A script: no cookie, the key in the header.
    const used = await fetch(`${rig.origin}/reports`, { headers: { authorization: `Bearer ${key}` } })
    expect(used.status).toBe(200)
    expect(await used.json()).toEqual({ owner: 'ada@example.com' })

    // The page never shows the key again, and does not let the browser cache the one that did.
    await page.goto(`${rig.origin}/api/auth/api-keys`)
    expect(await page.content()).not.toContain(key)
    await expect(page.locator('li', { hasText: 'Nightly report' }).locator('code').innerText()).resolves.toBe(`${key.slice(0, 12)}…${key.slice(-4)}`)
    await page.locator('li', { hasText: 'Nightly report' }).getByRole('button', { name: 'Revoke' }).click()
    await page.waitForURL(`${rig.origin}/api/auth/api-keys`)
    await expect(page.locator('p', { hasText: 'You have no API keys yet.' }).count()).resolves.toBe(1)
    expect((await fetch(`${rig.origin}/reports`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401)
    await context.close()
  })
})

/**
 * Organizations in a real browser: a user signed in with Chromium (playwright-core) creates an
 * organization on the built-in page, switches the session to it, and opens its members page, where
 * they change a member's role by the form. Screenshots of both pages go to /tmp/org-*.png for a
 * person to look at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'

const SECRET = 'organizations-browser-suite-secret-0123456789'
export const SCREENSHOTS = { organizations: '/tmp/org-organizations.png', members: '/tmp/org-members.png', phone: '/tmp/org-members-phone.png' }

describeWithChromium('organizations in Chromium: created, switched to and managed on the built-in pages', () => {
  const rig = useBrowserRig()
  let db: Knex
  let app: AuthApp
  let adapter: ReturnType<typeof KnexAdapter>
  beforeAll(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    adapter = KnexAdapter(db)
    await adapter.createUser({ email: 'ada@example.com', emailVerified: null, name: 'Ada Lovelace', image: null })
    await adapter.createUser({ email: 'bob@example.com', emailVerified: null, name: 'Bob <b>bold</b>', image: null })
    app = authApp({
      secret: SECRET,
      adapter,
      session: { strategy: 'database' },
      organizations: true,
      providers: [Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
    })
    rig.serve(app.app)
  })
  afterAll(() => db?.destroy())

  it('creates an organization on the page, switches to it, and changes a member\'s role on its members page', async () => {
    const context = await rig.newContext()
    const page = await context.newPage()
    const { csrfToken } = (await (await context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const signIn = await context.request.post(`${rig.origin}/api/auth/callback/credentials`, { form: { csrfToken, email: 'ada@example.com', password: 'pw' }, maxRedirects: 0 })
    expect(signIn.status()).toBe(302)

    await page.goto(`${rig.origin}/api/auth/organizations`)
    await expect(page.locator('h1').innerText()).resolves.toBe('Organizations')
    await expect(page.locator('.card').innerText()).resolves.toContain('You belong to no organization yet.')
    await page.getByLabel('Name').fill('Acme & Co <Labs>')
    await page.getByRole('button', { name: 'Create organization' }).click()
    await page.waitForSelector('[data-organization-id]')
    const row = page.locator('[data-organization-id]')
    await expect(row.locator('strong').innerText()).resolves.toBe('Acme & Co <Labs>')
    const organizationId = (await row.getAttribute('data-organization-id'))!
    await expect(row.innerText()).resolves.toContain('acme-co-labs')

    await row.getByRole('button', { name: 'Switch to it' }).click()
    await page.waitForSelector('[data-organization-id][data-active]')
    const session = (await (await context.request.get(`${rig.origin}/me`)).json()) as { user: { activeOrganization: unknown } }
    expect(session.user.activeOrganization).toEqual({ id: organizationId, roles: ['owner'] })
    await page.screenshot({ path: SCREENSHOTS.organizations, fullPage: true })

    const bob = (await adapter.getUserByEmail('bob@example.com'))!
    await app.addMember(organizationId, bob.id, ['member'])
    await page.getByRole('link', { name: 'Members and settings' }).click()
    await expect(page.locator('h1').innerText()).resolves.toBe('Acme & Co <Labs>')
    const members = page.locator('[data-members] > li')
    await expect(members.count()).resolves.toBe(2)
    await expect(members.nth(1).locator('strong').innerText()).resolves.toBe('Bob <b>bold</b>')
    await members.nth(1).getByLabel('Role').selectOption('admin')
    await members.nth(1).getByRole('button', { name: 'Change role' }).click()
    await page.waitForSelector(`[data-member-id="${bob.id}"] [data-roles]:has-text("admin")`)
    expect((await adapter.getMember(organizationId, bob.id))?.roles).toEqual(['admin'])
    await page.screenshot({ path: SCREENSHOTS.members, fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: SCREENSHOTS.phone, fullPage: true })
    await context.close()
  })
})

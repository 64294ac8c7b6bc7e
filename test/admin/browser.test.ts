/**
 * The admin pages in a real browser: Debian's Chromium (playwright-core) on an app at
 * http://localhost:<port> with the Password provider, roles, `admin`, `account`, the second factor
 * and the audit log on, its users on a migrated in-memory SQLite database. An administrator signs in
 * on the sign-in page, searches the users list, opens a user and bans them through the form, without
 * a line of script. Screenshots of both pages (light, dark, a phone's width) go to os.tmpdir().
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { adminStatements, defineAccess } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Password from 'portcullis/providers/password'
import type { Locator, Page } from 'playwright-core'
import { authApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'

const SECRET = 'admin-browser-suite-secret-0123456789'
const PASSWORD = 'correct horse battery staple'
/** Where the screenshots go (the lead looks at them). */
export const SCREENSHOTS = {
  users: join(tmpdir(), 'portcullis-admin-users.png'),
  user: join(tmpdir(), 'portcullis-admin-user.png'),
  usersDark: join(tmpdir(), 'portcullis-admin-users-dark.png'),
  userPhone: join(tmpdir(), 'portcullis-admin-user-phone.png'),
}

describeWithChromium('the admin pages in Chromium: sign in, search, open a user, ban them', () => {
  const rig = useBrowserRig()
  let smtp: TestSmtpServer
  let db: Knex
  let setRoles: (userId: string, roles: string[]) => Promise<unknown>

  beforeAll(async () => {
    smtp = await startSmtpServer()
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const auth = authApp({
      secret: SECRET,
      adapter: KnexAdapter(db),
      providers: [Password({ server: smtp.url, from: FROM, hashing: FAST_HASHING })],
      roles: defineAccess({ statements: { ...adminStatements, audit: ['read'] }, roles: { support: { user: ['list'] } } }),
      admin: true,
      account: { server: smtp.url, from: FROM },
      twoFactor: { issuer: 'Example' },
      audit: true,
      prune: { everyMinutes: 60, signal: AbortSignal.abort() },
      theme: { brandColor: '#1f6feb' },
      pages: { home: '/' },
    })
    setRoles = auth.setRoles as never
    auth.app.get('/', (_req, res) => void res.send('<!doctype html><title>Home</title><h1>home</h1>'))
    rig.serve(auth.app)
  })
  afterAll(async () => {
    await db?.destroy()
    await smtp?.close()
  })

  async function userNamed(email: string, name: string | null): Promise<string> {
    const adapter = KnexAdapter(db)
    const user = await adapter.createUser({ email, name, emailVerified: new Date() })
    await adapter.setUserPassword(user.id, await FAST_HASHING.hash(PASSWORD))
    return user.id
  }

  async function clickAndLoad(page: Page, target: Locator): Promise<string> {
    await Promise.all([page.waitForEvent('load'), target.click()])
    return page.url()
  }

  async function signInOnPage(page: Page, email: string, callbackUrl: string): Promise<void> {
    await page.goto(`${rig.origin}/api/auth/signin?${new URLSearchParams({ callbackUrl })}`)
    await page.getByLabel('E-mail', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    expect(await clickAndLoad(page, page.getByRole('button', { name: 'Sign in with Password' }))).toBe(`${rig.origin}${callbackUrl}`)
  }

  it('signs in an administrator, searches, opens a user and bans them', async () => {
    const rootId = await userNamed('root@example.com', 'Root Admin')
    await setRoles(rootId, ['admin'])
    await userNamed('ada.lovelace@example.com', 'Ada Lovelace')
    await userNamed('grace.hopper@example.com', 'Grace Hopper')
    await userNamed('a.very.long.address.that.goes.on.and.on@subdomain.example-organisation.com', 'Someone With A Rather Long Name Indeed')
    for (let i = 0; i < 8; i++) await userNamed(`member${i}@example.com`, i % 2 ? `Member ${i}` : null)

    const context = await rig.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    // The admin page sends a visitor to sign in, and back.
    await page.goto(`${rig.origin}/api/auth/admin`)
    expect(new URL(page.url()).pathname).toBe('/api/auth/signin')
    await signInOnPage(page, 'root@example.com', '/api/auth/admin')
    await expect(page.getByRole('heading', { name: 'Users', exact: true }).isVisible()).resolves.toBe(true)
    expect(await page.getByText('Users 1–12 of 12.').isVisible()).toBe(true)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280)
    await page.screenshot({ path: SCREENSHOTS.users, fullPage: true })

    await page.getByLabel('Search by address, name or user id').fill('lovelace')
    await clickAndLoad(page, page.getByRole('button', { name: 'Search' }))
    expect(new URL(page.url()).searchParams.get('q')).toBe('lovelace')
    expect(await page.locator('tbody tr').count()).toBe(1)
    await clickAndLoad(page, page.getByRole('link', { name: 'ada.lovelace@example.com' }))
    expect(new URL(page.url()).pathname).toBe('/api/auth/admin/user')
    await expect(page.getByRole('heading', { name: 'ada.lovelace@example.com' }).isVisible()).resolves.toBe(true)

    await page.getByLabel('Reason (only administrators see it)').fill('Sent spam to other members')
    await page.getByLabel('For', { exact: true }).selectOption('604800')
    await clickAndLoad(page, page.getByRole('button', { name: 'Ban', exact: true }))
    expect(await page.getByRole('status').textContent()).toContain('The user is banned')
    expect(await page.getByText(/Reason: Sent spam to other members/).isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Lift the ban' }).isVisible()).toBe(true)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280)
    await page.screenshot({ path: SCREENSHOTS.user, fullPage: true })

    // The banned user cannot sign in.
    const theirs = await rig.newContext()
    const their = await theirs.newPage()
    await their.goto(`${rig.origin}/api/auth/signin`)
    await their.getByLabel('E-mail', { exact: true }).fill('ada.lovelace@example.com')
    await their.getByLabel('Password', { exact: true }).fill(PASSWORD)
    expect(new URL(await clickAndLoad(their, their.getByRole('button', { name: 'Sign in with Password' }))).searchParams.get('error')).toBe('UserBanned')
    await theirs.close()
    await context.close()
  })

  it('reads well in dark mode and at a phone’s width, with nothing wider than the screen', async () => {
    const dark = await rig.newContext({ colorScheme: 'dark', viewport: { width: 1280, height: 900 } })
    const page = await dark.newPage()
    await signInOnPage(page, 'root@example.com', '/api/auth/admin')
    await page.screenshot({ path: SCREENSHOTS.usersDark, fullPage: true })
    await dark.close()

    const phone = await rig.newContext({ colorScheme: 'light', viewport: { width: 375, height: 740 }, isMobile: true })
    const small = await phone.newPage()
    await signInOnPage(small, 'root@example.com', '/api/auth/admin')
    await clickAndLoad(small, small.getByRole('link', { name: 'ada.lovelace@example.com' }))
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await small.screenshot({ path: SCREENSHOTS.userPhone, fullPage: true })
    await phone.close()
  })
})

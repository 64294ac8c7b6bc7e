/**
 * The account page in a real browser: Debian's Chromium (playwright-core) on an app at
 * http://localhost:<port> with the Password provider, GitHub (for the "Connect" button; no round
 * trip is made) and `account` on, its users on a migrated in-memory SQLite database, its mails to a
 * real SMTP server. Signs in on the sign-in page, shows the account page (screenshots in light and
 * dark, and at a phone's width, to os.tmpdir()), then deletes the account: first sent to confirm
 * (the server's clock moved past the fresh sign-in's limit), the password typed, back, deleted.
 */
import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import GitHub from 'portcullis/providers/github'
import Password from 'portcullis/providers/password'
import type { Locator, Page } from 'playwright-core'
import { authApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'
import { freezeClock, STALE_MS } from './account-app.js'

const SECRET = 'account-browser-suite-secret-0123456789'
const PASSWORD = 'correct horse battery staple'
/** Where the screenshots go (the lead looks at them). */
export const SCREENSHOTS = { light: join(tmpdir(), 'portcullis-account-light.png'), dark: join(tmpdir(), 'portcullis-account-dark.png'), phone: join(tmpdir(), 'portcullis-account-phone.png'), confirm: join(tmpdir(), 'portcullis-account-confirm.png') }

describeWithChromium('the account page in Chromium: the page, a fresh sign-in, deleting the account', () => {
  const rig = useBrowserRig()
  let smtp: TestSmtpServer
  let db: Knex
  const deleted: string[] = []

  beforeAll(async () => {
    smtp = await startSmtpServer()
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const { app } = authApp({
      secret: SECRET,
      adapter: KnexAdapter(db),
      providers: [Password({ server: smtp.url, from: FROM, hashing: FAST_HASHING }), GitHub({ clientId: 'account-suite', clientSecret: 'account-suite-secret' })],
      account: { server: smtp.url, from: FROM },
      theme: { brandColor: '#1f6feb' },
      pages: { home: '/' },
      events: { userDeleted: ({ user }) => void deleted.push(String(user.email)) },
    })
    app.get('/', (_req, res) => void res.send('<!doctype html><title>Home</title><h1>home</h1>'))
    rig.serve(app)
  })
  afterAll(async () => {
    await db?.destroy()
    await smtp?.close()
  })
  afterEach(() => {
    jest.useRealTimers()
  })

  async function userNamed(email: string): Promise<void> {
    const adapter = KnexAdapter(db)
    const user = await adapter.createUser({ email, name: 'Ada Lovelace', emailVerified: new Date() })
    await adapter.setUserPassword(user.id, await FAST_HASHING.hash(PASSWORD))
  }

  async function clickAndLoad(page: Page, target: Locator): Promise<string> {
    await Promise.all([page.waitForEvent('load'), target.click()])
    return page.url()
  }

  async function signInOnPage(page: Page, email: string): Promise<void> {
    await page.goto(`${rig.origin}/api/auth/signin?callbackUrl=%2Fapi%2Fauth%2Faccount`)
    await page.getByLabel('E-mail', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    expect(await clickAndLoad(page, page.getByRole('button', { name: 'Sign in with Password' }))).toBe(`${rig.origin}/api/auth/account`)
  }

  it('shows the account page, themed, in light, dark and at a phone’s width', async () => {
    await userNamed('ada@example.com')
    for (const [shot, options] of [
      ['light', { colorScheme: 'light' as const }],
      ['dark', { colorScheme: 'dark' as const }],
      ['phone', { colorScheme: 'light' as const, viewport: { width: 375, height: 740 }, isMobile: true }],
    ] as const) {
      const context = await rig.newContext(options)
      const page = await context.newPage()
      await signInOnPage(page, 'ada@example.com')
      await expect(page.getByRole('heading', { name: 'Your account', exact: true }).isVisible()).resolves.toBe(true)
      expect(await page.getByText('ada@example.com (confirmed)').isVisible()).toBe(true)
      expect(await page.getByRole('link', { name: 'Your sessions' }).getAttribute('href')).toBe('/api/auth/sessions')
      expect(await page.getByRole('button', { name: 'Connect GitHub' }).isVisible()).toBe(true)
      // The way back to the app, under the card.
      expect(await page.locator('.home a').getAttribute('href')).toBe(`${rig.origin}/`)
      // Nothing wider than the phone's screen.
      if (shot === 'phone') expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      await page.screenshot({ path: SCREENSHOTS[shot], fullPage: true })
      await context.close()
    }
  })

  it('deletes the account: sent to confirm first when the sign-in is old, then signed out on the home page', async () => {
    freezeClock(Date.now())
    await userNamed('bye@example.com')
    const context = await rig.newContext()
    const page = await context.newPage()
    await signInOnPage(page, 'bye@example.com')
    // The box must be ticked: the browser refuses to send the form without it.
    await page.getByRole('button', { name: 'Delete my account' }).click()
    expect(page.url()).toBe(`${rig.origin}/api/auth/account`)
    jest.setSystemTime(Date.now() + STALE_MS)
    await page.getByLabel('I want to delete my account').check()
    const confirmUrl = await clickAndLoad(page, page.getByRole('button', { name: 'Delete my account' }))
    expect(new URL(confirmUrl).pathname).toBe('/api/auth/account/confirm')
    await page.screenshot({ path: SCREENSHOTS.confirm, fullPage: true })
    expect(Number((await db('User').where({ email: 'bye@example.com' }).count({ n: '*' }))[0]!.n)).toBe(1)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    expect(await clickAndLoad(page, page.getByRole('button', { name: 'Confirm' }))).toBe(`${rig.origin}/api/auth/account`)
    await page.getByLabel('I want to delete my account').check()
    expect(await clickAndLoad(page, page.getByRole('button', { name: 'Delete my account' }))).toBe(`${rig.origin}/`)
    expect(Number((await db('User').where({ email: 'bye@example.com' }).count({ n: '*' }))[0]!.n)).toBe(0)
    expect(deleted).toEqual(['bye@example.com'])
    const session = (await (await context.request.get(`${rig.origin}/me`)).json()) as unknown
    expect(session).toBeNull()
    const mail = await smtp.nextMessage()
    expect(mail.to).toEqual(['bye@example.com'])
    await context.close()
  })
})

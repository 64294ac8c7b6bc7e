/**
 * Usernames in a real browser: Debian's Chromium (playwright-core) typing through the built-in pages
 * of an app with `Password({ usernames: true })` on http://localhost:<port>, its mails received by a
 * real SMTP server and its users on a migrated in-memory SQLite database. Sign up with a username on
 * the sign-up page, sign in with it (and a lookalike) on the sign-in page, change it on `/username`
 * (a taken name refused there), reached from the account page.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Password, { scryptHasher } from 'portcullis/providers/password'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { authApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

const SECRET = 'username-browser-suite-secret-0123456789'
const FROM = 'Portcullis tests <auth@example.test>'
const PASSWORD = 'correct horse battery staple'

describeWithChromium('usernames in Chromium: sign up with one, sign in with it, change it', () => {
  const rig = useBrowserRig()
  let smtp: TestSmtpServer
  let db: Knex

  beforeAll(async () => {
    smtp = await startSmtpServer()
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    const app = authApp({
      secret: SECRET,
      adapter: KnexAdapter(db),
      providers: [Password({ server: smtp.url, from: FROM, hashing: scryptHasher({ N: 2 ** 14 }), usernames: true })],
      account: { server: smtp.url, from: FROM },
    })
    app.app.get('/', (_req, res) => void res.send('home'))
    rig.serve(app.app)
  })
  afterAll(async () => {
    await db?.destroy()
    await smtp?.close()
  })
  beforeEach(() => smtp?.skipReceived())

  async function newBrowser(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await rig.newContext()
    return { context, page: await context.newPage() }
  }

  async function clickAndLoad(page: Page, target: Locator): Promise<string> {
    await Promise.all([page.waitForEvent('load'), target.click()])
    return page.url()
  }

  async function signedInAs(context: BrowserContext): Promise<string | null> {
    const session = (await (await context.request.get(`${rig.origin}/me`)).json()) as { user?: { email?: string } } | null
    return session?.user?.email ?? null
  }

  /** Signs up on the page with a username and opens the mail's link in the same browser. */
  async function signUpOnPage(page: Page, email: string, username: string): Promise<void> {
    await page.goto(`${rig.origin}/api/auth/signup`)
    await page.getByLabel('E-mail', { exact: true }).fill(email)
    await page.getByLabel('Username (optional)').fill(username)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    expect(await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }))).toBe(`${rig.origin}/api/auth/verify-request?provider=password&type=signup`)
    for (;;) {
      const mail = await smtp.nextMessage()
      if (!mail.to.includes(email)) continue
      await page.goto(linkOf(mail))
      return
    }
  }

  async function signInOnPage(page: Page, typed: string): Promise<string> {
    await page.goto(`${rig.origin}/api/auth/signin`)
    await page.getByLabel('E-mail or username', { exact: true }).fill(typed)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    return clickAndLoad(page, page.getByRole('button', { name: 'Sign in with Password' }))
  }

  it('signs up with a username, signs in with it and a lookalike, and changes it on /username from the account page', async () => {
    const ada = await newBrowser()
    await signUpOnPage(ada.page, 'ada@example.com', 'Ada.L')
    expect(await signedInAs(ada.context)).toBe('ada@example.com')
    const other = await newBrowser()
    await signUpOnPage(other.page, 'bob@example.com', 'bob')

    // The sign-in field takes a name (a text field: the browser does not ask for an @).
    const laptop = await newBrowser()
    expect(await signInOnPage(laptop.page, 'Ada.L')).toBe(`${rig.origin}/`)
    expect(await signedInAs(laptop.context)).toBe('ada@example.com')
    const phone = await newBrowser()
    expect(await signInOnPage(phone.page, 'ada_l')).toBe(`${rig.origin}/`)
    expect(await signedInAs(phone.context)).toBe('ada@example.com')

    // From the account page to /username; a lookalike of Bob's name is refused there, a free one kept.
    await ada.page.goto(`${rig.origin}/api/auth/account`)
    expect(await clickAndLoad(ada.page, ada.page.getByRole('link', { name: 'Choose your username' }))).toBe(`${rig.origin}/api/auth/username`)
    await expect(ada.page.locator('p strong').innerText()).resolves.toBe('Ada.L')
    await ada.page.getByLabel('New username').fill('B0B')
    await clickAndLoad(ada.page, ada.page.getByRole('button', { name: 'Save the username' }))
    await expect(ada.page.getByRole('alert').innerText()).resolves.toContain('is taken')
    await ada.page.getByLabel('New username').fill('countess')
    expect(await clickAndLoad(ada.page, ada.page.getByRole('button', { name: 'Save the username' }))).toBe(`${rig.origin}/api/auth/username`)
    await expect(ada.page.locator('p strong').innerText()).resolves.toBe('countess')
    const kiosk = await newBrowser()
    expect(await signInOnPage(kiosk.page, 'countess')).toBe(`${rig.origin}/`)
    expect(await signedInAs(kiosk.context)).toBe('ada@example.com')
  })
})

/**
 * The Password provider in a real browser: Debian's Chromium (playwright-core) clicking and typing
 * through the built-in pages of an app on http://localhost:<port>, its mails received by a real SMTP
 * server (smtp-server) and its users on a migrated in-memory SQLite database.
 *
 * The whole journey (sign up from the sign-in page, the verification link in the same browser, sign
 * out, sign in with the password, a second browser, "Forgot your password?", the reset link, the old
 * password refused and the other browsers signed out), the policy refusals the sign-up page shows
 * (a common password, a short one in the browser and on the server), and, on a second app with
 * `requireEmailVerification`, the sign-in page's "Send the link again". One browser for the file;
 * each test its own contexts. Two screenshots (sign-up and reset pages) go to os.tmpdir().
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Password, { scryptHasher, type PasswordOptions } from 'portcullis/providers/password'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { closeLocal, listenLocal, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

const TITLE = 'the Password provider in Chromium: sign up, verify, sign in, forget, reset'
const SECRET = 'password-browser-suite-secret-0123456789'
const FROM = 'Portcullis tests <auth@example.test>'
const PASSWORD = 'correct horse battery staple'
const NEW_PASSWORD = 'a brand new passphrase'

/** Where the screenshots go (the lead looks at them). */
const SIGNUP_SCREENSHOT = join(tmpdir(), 'portcullis-password-signup.png')
const RESET_SCREENSHOT = join(tmpdir(), 'portcullis-password-reset.png')

describeWithChromium(TITLE, browserSuite)

/** A migrated in-memory SQLite database. */
async function passwordDatabase(): Promise<Knex> {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
  return db
}

/** Portcullis with the Password provider on `db`, mail to `smtp`, and two pages to land on. */
function passwordApp(db: Knex, smtp: TestSmtpServer, options: PasswordOptions = {}, config: Partial<PortcullisConfig> = {}): AuthApp {
  const app = authApp({
    secret: SECRET,
    adapter: KnexAdapter(db),
    providers: [Password({ server: smtp.url, from: FROM, hashing: scryptHasher({ N: 2 ** 14 }), ...options })],
    ...config,
  })
  app.app.get('/', (_req, res) => void res.send('home'))
  app.app.get('/dashboard', (_req, res) => void res.send('dashboard'))
  return app
}

function browserSuite() {
  const rig = useBrowserRig()
  let smtp: TestSmtpServer
  let db: Knex
  // The same database behind a second app that refuses unverified addresses, on a port of its own.
  let strictServer: Server
  let strictOrigin: string

  beforeAll(async () => {
    smtp = await startSmtpServer()
    db = await passwordDatabase()
    rig.serve(passwordApp(db, smtp).app)
    ;({ server: strictServer, origin: strictOrigin } = await listenLocal(passwordApp(db, smtp, { requireEmailVerification: true }).app))
  })
  afterAll(async () => {
    if (strictServer) await closeLocal(strictServer)
    await db?.destroy()
    await smtp?.close()
  })
  beforeEach(() => smtp?.skipReceived())

  /** A new context and its page. */
  async function newBrowser(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await rig.newContext()
    return { context, page: await context.newPage() }
  }

  /** The e-mail address of the session of `context` on `origin`, or null. */
  async function signedInAs(context: BrowserContext, origin = rig.origin): Promise<string | null> {
    const session = (await (await context.request.get(`${origin}/me`)).json()) as { user?: { email?: string } } | null
    return session?.user?.email ?? null
  }

  /**
   * The next mail to `email`: its recipients, subject and link. Mails to others are passed over: one
   * sent after an earlier test ended (mails go out after the answer) must not be taken for this one.
   */
  async function nextMailTo(email: string): Promise<{ to: string[]; subject: string; link: string }> {
    for (;;) {
      const mail = await smtp.nextMessage()
      if (mail.to.includes(email)) return { to: mail.to, subject: mail.parsed.subject ?? '', link: linkOf(mail) }
    }
  }

  async function usersWithEmail(email: string): Promise<number> {
    return Number((await db('User').where({ email }).count({ n: '*' }).first())?.n)
  }

  const signInUrl = (origin = rig.origin) => `${origin}/api/auth/signin?callbackUrl=%2Fdashboard`

  /**
   * Clicks `target` and waits for the page it loads (after any redirects); the URL it landed on.
   * A form the browser refuses to send loads nothing: that click is made without this.
   */
  async function clickAndLoad(page: Page, target: Locator): Promise<string> {
    await Promise.all([page.waitForEvent('load'), target.click()])
    return page.url()
  }

  /** Types into the sign-in page's Password form and presses its button; where the browser lands. */
  async function signInOnPage(page: Page, email: string, password: string, origin = rig.origin): Promise<URL> {
    await page.goto(signInUrl(origin))
    await page.getByLabel('E-mail', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(password)
    return new URL(await clickAndLoad(page, page.getByRole('button', { name: 'Sign in with Password' })))
  }

  /** Fills the sign-up page (already open) and presses "Create account"; the URL of the page it loads. */
  async function fillSignUp(page: Page, fields: { name?: string; email: string; password: string }): Promise<string> {
    if (fields.name !== undefined) await page.getByLabel('Name (optional)').fill(fields.name)
    await page.getByLabel('E-mail', { exact: true }).fill(fields.email)
    await page.getByLabel('Password', { exact: true }).fill(fields.password)
    return clickAndLoad(page, page.getByRole('button', { name: 'Create account' }))
  }

  it('signs up from the sign-in page, verifies in the same browser, signs in with the password, resets it from another browser and signs every other one out', async () => {
    const email = 'ada@example.com'
    const laptop = await newBrowser()

    // Sign up, from the sign-in page's link (which keeps where to go after).
    await laptop.page.goto(signInUrl())
    expect(await clickAndLoad(laptop.page, laptop.page.getByRole('link', { name: 'Create an account' }))).toBe(`${rig.origin}/api/auth/signup?callbackUrl=${encodeURIComponent(`${rig.origin}/dashboard`)}`)
    await expect(laptop.page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Create an account')
    expect(await fillSignUp(laptop.page, { name: 'Ada', email: 'Ada@Example.com', password: PASSWORD })).toBe(`${rig.origin}/api/auth/verify-request?provider=password&type=signup`)
    await expect(laptop.page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Check your e-mail')
    expect(await signedInAs(laptop.context)).toBeNull()

    // The verification link, opened in the browser that signed up: signed in at once, at the callbackUrl.
    const verification = await nextMailTo(email)
    expect(verification.to).toEqual([email])
    expect(verification.subject).toBe(`Confirm your e-mail address for ${new URL(rig.origin).host}`)
    expect(verification.link.startsWith(`${rig.origin}/api/auth/verify-email?`)).toBe(true)
    await laptop.page.goto(verification.link)
    expect(laptop.page.url()).toBe(`${rig.origin}/dashboard`)
    const session = (await (await laptop.context.request.get(`${rig.origin}/me`)).json()) as { user: { email: string; name: string } }
    expect(session.user).toMatchObject({ email, name: 'Ada' })
    expect((await db('User').where({ email }).first()).emailVerified).not.toBeNull()

    // Sign out on the sign-out page, then in again with the password.
    await laptop.page.goto(`${rig.origin}/api/auth/signout`)
    await clickAndLoad(laptop.page, laptop.page.getByRole('button', { name: 'Sign out' }))
    expect(await signedInAs(laptop.context)).toBeNull()
    expect((await signInOnPage(laptop.page, email, PASSWORD)).href).toBe(`${rig.origin}/dashboard`)
    expect(await signedInAs(laptop.context)).toBe(email)

    // Another browser signs in too.
    const phone = await newBrowser()
    expect((await signInOnPage(phone.page, email, PASSWORD)).href).toBe(`${rig.origin}/dashboard`)
    expect(await signedInAs(phone.context)).toBe(email)

    // A third one forgot the password.
    const kiosk = await newBrowser()
    await kiosk.page.goto(signInUrl())
    expect(await clickAndLoad(kiosk.page, kiosk.page.getByRole('link', { name: 'Forgot your password?' }))).toBe(`${rig.origin}/api/auth/forgot-password`)
    await kiosk.page.getByLabel('E-mail', { exact: true }).fill('ADA@example.com')
    expect(await clickAndLoad(kiosk.page, kiosk.page.getByRole('button', { name: 'Send the link' }))).toBe(`${rig.origin}/api/auth/verify-request?provider=password&type=reset`)
    await expect(kiosk.page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Check your e-mail')
    const reset = await nextMailTo(email)
    expect(reset.to).toEqual([email])
    expect(reset.subject).toBe(`Set a new password for ${new URL(rig.origin).host}`)
    expect(reset.link.startsWith(`${rig.origin}/api/auth/reset-password?`)).toBe(true)

    const resetPage = await kiosk.page.goto(reset.link)
    expect(resetPage?.headers()['cache-control']).toBe('private, no-cache, no-store, max-age=0')
    await expect(kiosk.page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Choose a new password')
    await expect(kiosk.page.locator('p', { hasText: 'signs you out on every other device' }).innerText()).resolves.toBe(`For ${email}. Setting it signs you out on every other device.`)
    // The username field is for password managers only: not shown (the theme's CSS once overrode `hidden`).
    expect(await kiosk.page.locator('input[name="username"]').isVisible()).toBe(false)
    await kiosk.page.screenshot({ path: RESET_SCREENSHOT, fullPage: true })
    await kiosk.page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD)
    // Where the sign-in page this browser started from said to go.
    expect(await clickAndLoad(kiosk.page, kiosk.page.getByRole('button', { name: 'Set the new password' }))).toBe(`${rig.origin}/dashboard`)
    expect(await signedInAs(kiosk.context)).toBe(email)

    // Every other session ended: the phone's, and the laptop's.
    expect(await signedInAs(phone.context)).toBeNull()
    expect(await signedInAs(laptop.context)).toBeNull()

    // The old password is refused on the sign-in page, with its message; the new one signs in.
    const checker = await newBrowser()
    const refused = await signInOnPage(checker.page, email, PASSWORD)
    expect(refused.pathname).toBe('/api/auth/signin')
    expect(refused.searchParams.get('error')).toBe('CredentialsSignin')
    // At the password form, naming it, with the address typed filled in again and the password not.
    await expect(checker.page.getByRole('alert').innerText()).resolves.toBe('Sign in with Password failed. Check the details you entered are correct.')
    await expect(checker.page.getByLabel('E-mail', { exact: true }).inputValue()).resolves.toBe(email)
    await expect(checker.page.getByLabel('Password', { exact: true }).inputValue()).resolves.toBe('')
    expect(await signedInAs(checker.context)).toBeNull()
    expect((await signInOnPage(checker.page, email, NEW_PASSWORD)).href).toBe(`${rig.origin}/dashboard`)
    expect(await signedInAs(checker.context)).toBe(email)

    // The reset link worked once: the same page again is refused.
    await kiosk.page.goto(reset.link)
    await kiosk.page.getByLabel('Password', { exact: true }).fill('yet another passphrase')
    const replayed = new URL(await clickAndLoad(kiosk.page, kiosk.page.getByRole('button', { name: 'Set the new password' })))
    expect(replayed.searchParams.get('error')).toBe('Verification')
    const later = await newBrowser()
    expect((await signInOnPage(later.page, email, NEW_PASSWORD)).href).toBe(`${rig.origin}/dashboard`)

    for (const each of [laptop, phone, kiosk, checker, later]) await each.context.close()
  })

  it('shows policy refusals on the sign-up page: a common password, one too short for the browser, one too short for the server; nothing created, no mail', async () => {
    const email = 'grace@example.com'
    const { context, page } = await newBrowser()
    const posts: string[] = []
    page.on('request', (request) => void (request.method() === 'POST' && posts.push(new URL(request.url()).pathname)))
    await page.goto(`${rig.origin}/api/auth/signup`)

    // A common password: the server's message on the page, the address and name kept, the password not.
    expect(await fillSignUp(page, { name: 'Grace', email, password: 'password123' })).toBe(`${rig.origin}/api/auth/signup`)
    await expect(page.getByRole('alert').innerText()).resolves.toBe('This password is one of the most common ones, which are tried first: choose another.')
    await expect(page.getByLabel('E-mail', { exact: true }).inputValue()).resolves.toBe(email)
    await expect(page.getByLabel('Name (optional)').inputValue()).resolves.toBe('Grace')
    await expect(page.getByLabel('Password', { exact: true }).inputValue()).resolves.toBe('')
    expect(await page.content()).not.toContain('password123')
    await page.screenshot({ path: SIGNUP_SCREENSHOT, fullPage: true })
    expect(posts).toEqual(['/api/auth/signup'])

    // Too short for the browser (minlength): the form is not sent.
    const password = page.getByLabel('Password', { exact: true })
    await password.fill('short1')
    await page.getByRole('button', { name: 'Create account' }).click()
    expect(await password.evaluate((input) => (input as HTMLInputElement).validity.tooShort)).toBe(true)
    expect(posts).toEqual(['/api/auth/signup'])

    // Eight UTF-16 units pass the browser's minlength; four characters (code points) do not pass the server.
    expect(await fillSignUp(page, { email, password: '😀😀😀😀' })).toBe(`${rig.origin}/api/auth/signup`)
    expect(posts).toEqual(['/api/auth/signup', '/api/auth/signup'])
    await expect(page.getByRole('alert').innerText()).resolves.toBe('The password must have at least 8 characters.')
    expect(await usersWithEmail(email)).toBe(0)

    // No mail was sent for the refusals: the next one is the verification of an accepted sign-up.
    expect(await fillSignUp(page, { email, password: PASSWORD })).toBe(`${rig.origin}/api/auth/verify-request?provider=password&type=signup`)
    expect(await usersWithEmail(email)).toBe(1)
    const mail = await nextMailTo(email)
    expect(mail.to).toEqual([email])
    expect(mail.link.startsWith(`${rig.origin}/api/auth/verify-email?`)).toBe(true)
    expect(smtp.messages.filter((each) => each.to.includes(email))).toHaveLength(1)
    await context.close()
  })

  it('requireEmailVerification: the sign-in page asks to confirm the address first, and "Send the link again" mails a new link that signs in', async () => {
    const email = 'lin@example.com'
    const signUpBrowser = await newBrowser()
    await signUpBrowser.page.goto(`${strictOrigin}/api/auth/signup?callbackUrl=%2Fdashboard`)
    expect(await fillSignUp(signUpBrowser.page, { email, password: PASSWORD })).toBe(`${strictOrigin}/api/auth/verify-request?provider=password&type=signup`)
    const first = await nextMailTo(email)
    expect(first.to).toEqual([email])

    // Another browser, the right password: refused, with the reason and the form to send the link again.
    const { context, page } = await newBrowser()
    const refused = await signInOnPage(page, email, PASSWORD, strictOrigin)
    expect(refused.pathname).toBe('/api/auth/signin')
    expect(refused.searchParams.get('code')).toBe('email_not_verified')
    await expect(page.getByRole('alert').innerText()).resolves.toBe('Confirm your e-mail address first: open the link we sent you when you signed up.')
    expect(await signedInAs(context, strictOrigin)).toBeNull()

    const resend = page.locator('form', { has: page.getByRole('button', { name: 'Send the link again' }) })
    // Filled in with the address just typed: the user need not type it again.
    await expect(resend.getByLabel('E-mail address to confirm').inputValue()).resolves.toBe(email)
    expect(await clickAndLoad(page, resend.getByRole('button', { name: 'Send the link again' }))).toBe(`${strictOrigin}/api/auth/verify-request?provider=password&type=signup`)
    const again = await nextMailTo(email)
    expect(again.to).toEqual([email])
    expect(again.link.startsWith(`${strictOrigin}/api/auth/verify-email?`)).toBe(true)
    expect(new URL(again.link).searchParams.get('token')).not.toBe(new URL(first.link).searchParams.get('token'))

    // The new link, in the browser that asked for it: verified and signed in.
    await page.goto(again.link)
    expect(page.url()).toBe(`${strictOrigin}/dashboard`)
    expect(await signedInAs(context, strictOrigin)).toBe(email)

    // A wrong password still gets the plain refusal, not the resend form.
    const other = await newBrowser()
    const wrong = await signInOnPage(other.page, email, 'not the password at all', strictOrigin)
    expect(wrong.searchParams.get('code')).toBe('credentials')
    await expect(other.page.getByRole('button', { name: 'Send the link again' }).count()).resolves.toBe(0)
    await expect(other.page.getByRole('alert').innerText()).resolves.toBe('Sign in with Password failed. Check the details you entered are correct.')
    // Verified now: the right password signs in.
    expect((await signInOnPage(other.page, email, PASSWORD, strictOrigin)).href).toBe(`${strictOrigin}/dashboard`)

    for (const each of [signUpBrowser, { context }, other]) await each.context.close()
  })
}

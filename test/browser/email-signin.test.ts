/**
 * One real browser (Debian's Chromium, driven by playwright-core) through the example's e-mail
 * sign-in: the built-in sign-in page's e-mail form, the verify-request page, the link of the e-mail
 * the in-process SMTP server received, and the dashboard, signed in.
 *
 * Without /usr/bin/chromium the suite skips with a line saying so (`apt-get install -y chromium`);
 * with `CI` set it fails instead. Screenshots of the sign-in page and the verify-request page go to
 * the OS temp directory, to look at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Knex } from 'knex'
import type { Browser, Page } from 'playwright-core'
import { createApp } from '../../examples/express/app.js'
import { describeWithChromium, launchChromium } from '../support/chromium.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { recordingLogger } from '../support/logger.js'

const TITLE = 'examples/express in Chromium: sign in with an e-mail link'

/** Where the screenshots go (not the repository). */
const SCREENSHOTS = {
  signIn: join(tmpdir(), 'portcullis-email-signin.png'),
  verifyRequest: join(tmpdir(), 'portcullis-email-verify-request.png'),
}

describeWithChromium(TITLE, browserSuite)

function browserSuite() {
  let server: Server
  let appOrigin: string
  let smtp: TestSmtpServer
  let db: Knex
  let browser: Browser

  beforeAll(async () => {
    process.env.AUTH_SECRET ??= 'test-secret-for-the-express-example-0123456789'
    server = createServer()
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    appOrigin = `http://localhost:${(server.address() as AddressInfo).port}`
    const [started] = await Promise.all([
      startSmtpServer(),
      (async () => {
        browser = await launchChromium()
      })(),
    ])
    smtp = started
    const created = await createApp({ databaseFile: ':memory:', emailServer: smtp.url, logger: recordingLogger() })
    db = created.db
    server.on('request', created.app)
  })

  afterAll(async () => {
    await browser?.close()
    server?.close()
    server?.closeAllConnections()
    await smtp?.close()
    await db?.destroy()
  })

  it('asks for a link on the built-in sign-in page, shows "check your e-mail", and the mailed link signs in', async () => {
    const page: Page = await browser.newPage({ viewport: { width: 900, height: 800 } })

    // A protected page sends a signed-out visitor to the built-in sign-in page, e-mail form included.
    await page.goto(`${appOrigin}/dashboard`)
    expect(page.url()).toBe(`${appOrigin}/api/auth/signin?callbackUrl=%2Fdashboard`)
    const emailInput = page.getByLabel('E-mail')
    await expect(emailInput.isVisible()).resolves.toBe(true)
    await emailInput.fill('katherine@example.org')
    await page.screenshot({ path: SCREENSHOTS.signIn, fullPage: true })

    // The browser's own form validation runs first (type="email", required).
    await page.getByRole('button', { name: 'Sign in with Email' }).click()
    await page.waitForURL(`${appOrigin}/api/auth/verify-request?provider=nodemailer&type=email`)
    await expect(page.locator('h1').innerText()).resolves.toBe('Check your e-mail')
    await page.screenshot({ path: SCREENSHOTS.verifyRequest, fullPage: true })

    const mail = await smtp.nextMessage()
    expect(mail.to).toEqual(['katherine@example.org'])
    const link = linkOf(mail)
    expect(link.startsWith(`${appOrigin}/api/auth/callback/nodemailer?`)).toBe(true)
    // The HTML part's button is the same link.
    await page.setContent(mail.parsed.html as string)
    await expect(page.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href')).resolves.toBe(link)

    await page.goto(link)
    await page.waitForURL(`${appOrigin}/dashboard`)
    await expect(page.locator('body').innerText()).resolves.toContain('Welcome, katherine@example.org.')
    const cookies = await page.context().cookies(appOrigin)
    expect(cookies.find((cookie) => cookie.name === 'authjs.session-token')).toMatchObject({ httpOnly: true, sameSite: 'Lax' })

    // The link works once. Opened again (its browser binding spent with it), it asks first, and the
    // button finds the token used.
    await page.goto(link)
    await expect(page.locator('body').innerText()).resolves.toContain('Sign in as katherine@example.org?')
    await page.screenshot({ path: `${tmpdir()}/portcullis-email-confirm.png` })
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/api\/auth\/error/)
    expect(new URL(page.url()).pathname).toBe('/api/auth/error')
    await expect(page.locator('body').innerText()).resolves.toContain('The sign-in link is no longer valid.')
  }, 20000)
}

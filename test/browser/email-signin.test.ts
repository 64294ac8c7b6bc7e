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
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { serveExpressExample, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

const TITLE = 'examples/express in Chromium: sign in with an e-mail link'

/** Where the screenshots go (not the repository). */
const SCREENSHOTS = {
  signIn: join(tmpdir(), 'portcullis-email-signin.png'),
  verifyRequest: join(tmpdir(), 'portcullis-email-verify-request.png'),
}

describeWithChromium(TITLE, browserSuite)

function browserSuite() {
  const rig = useBrowserRig()
  let smtp: TestSmtpServer
  beforeAll(async () => {
    smtp = await startSmtpServer()
  })
  afterAll(async () => {
    await smtp?.close()
  })
  serveExpressExample(rig, () => ({ emailServer: smtp.url }))

  it('asks for a link on the built-in sign-in page, shows "check your e-mail", and the mailed link signs in', async () => {
    const page: Page = await rig.browser.newPage({ viewport: { width: 900, height: 800 } })

    // A protected page sends a signed-out visitor to the built-in sign-in page, e-mail form included.
    await page.goto(`${rig.origin}/dashboard`)
    expect(page.url()).toBe(`${rig.origin}/api/auth/signin?callbackUrl=%2Fdashboard`)
    const emailInput = page.locator('form[action$="/signin/nodemailer"]').getByLabel('E-mail')
    await expect(emailInput.isVisible()).resolves.toBe(true)
    await emailInput.fill('katherine@example.org')
    await page.screenshot({ path: SCREENSHOTS.signIn, fullPage: true })

    // The browser's own form validation runs first (type="email", required).
    await page.getByRole('button', { name: 'Sign in with Email' }).click()
    await page.waitForURL(`${rig.origin}/api/auth/verify-request?provider=nodemailer&type=email`)
    await expect(page.locator('h1').innerText()).resolves.toBe('Check your e-mail')
    await page.screenshot({ path: SCREENSHOTS.verifyRequest, fullPage: true })

    const mail = await smtp.nextMessage()
    expect(mail.to).toEqual(['katherine@example.org'])
    const link = linkOf(mail)
    expect(link.startsWith(`${rig.origin}/api/auth/callback/nodemailer?`)).toBe(true)
    // The HTML part's button is the same link.
    await page.setContent(mail.parsed.html as string)
    await expect(page.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href')).resolves.toBe(link)

    await page.goto(link)
    await page.waitForURL(`${rig.origin}/dashboard`)
    await expect(page.locator('body').innerText()).resolves.toContain('Welcome, katherine@example.org.')
    const cookies = await page.context().cookies(rig.origin)
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
  })
}

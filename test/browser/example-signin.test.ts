/**
 * One real browser (Debian's Chromium, driven by playwright-core) through the example's OIDC
 * sign-in with the local dev identity provider: the built-in sign-in page, the IdP's login page
 * (no consent page), the callback, the dashboard, and sign-out.
 *
 * The app is reached as http://localhost:<port> and the IdP as http://127.0.0.1:<port>: two sites,
 * as with a real provider, so the callback is a cross-site navigation that must still carry the
 * check cookies (PKCE, nonce: SameSite=Lax).
 *
 * Without /usr/bin/chromium the suite skips with a line saying so (`apt-get install -y chromium`);
 * with `CI` set it fails instead. Screenshots of the sign-in page, the IdP's login page and the
 * dashboard go to the OS temp directory, to look at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import type { DevIdp } from '../../examples/express/dev-idp.js'
import { serveExpressExample, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { startQuietDevIdp } from '../support/dev-idp.js'

const TITLE = 'examples/express in Chromium: sign in with the dev IdP, sign out'

/** Where the screenshots go (not the repository). */
const SCREENSHOTS = {
  signIn: join(tmpdir(), 'portcullis-example-signin.png'),
  idpLogin: join(tmpdir(), 'portcullis-example-idp-login.png'),
  dashboard: join(tmpdir(), 'portcullis-example-dashboard.png'),
}

describeWithChromium(TITLE, browserSuite)

function browserSuite() {
  // Listens first: the callback URL registered at the IdP needs the app's port.
  const rig = useBrowserRig()
  let idp: DevIdp
  beforeAll(async () => {
    idp = await startQuietDevIdp({ host: '127.0.0.1', clientRedirectUri: `${rig.origin}/api/auth/callback/dev-idp` })
  })
  afterAll(async () => {
    await idp?.close()
  })
  serveExpressExample(rig, () => ({ devIdp: idp }))

  it('signs in from the built-in sign-in page through the IdP, shows the dashboard, and signs out', async () => {
    const page: Page = await rig.browser.newPage({ viewport: { width: 900, height: 700 } })

    // A protected page sends a signed-out visitor to the built-in sign-in page.
    await page.goto(`${rig.origin}/dashboard`)
    expect(page.url()).toBe(`${rig.origin}/api/auth/signin?callbackUrl=%2Fdashboard`)
    const devIdpButton = page.getByRole('button', { name: 'Sign in with Local dev identity provider' })
    await expect(devIdpButton.isVisible()).resolves.toBe(true)
    await page.screenshot({ path: SCREENSHOTS.signIn, fullPage: true })

    // The IdP's development login page, on the other site.
    await devIdpButton.click()
    await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'))
    // It says that any name and any password will do.
    await expect(page.locator('body').innerText()).resolves.toContain('any login name and any password sign you in')
    await page.fill('input[name="login"]', 'grace')
    await page.fill('input[name="password"]', 'any password')
    await page.screenshot({ path: SCREENSHOTS.idpLogin, fullPage: true })
    await page.getByRole('button', { name: 'Sign-in' }).click()

    // No consent page: the IdP sends the browser straight to the callback, and on to the dashboard.
    await page.waitForURL(`${rig.origin}/dashboard`)
    await expect(page.locator('body').innerText()).resolves.toContain('Welcome, Grace.')
    await expect(page.locator('body').innerText()).resolves.toContain('E-mail: grace@example.test')
    await page.screenshot({ path: SCREENSHOTS.dashboard, fullPage: true })
    const cookies = await page.context().cookies(rig.origin)
    expect(cookies.find((cookie) => cookie.name === 'authjs.session-token')).toMatchObject({ httpOnly: true, sameSite: 'Lax' })

    // The app's sign-out link, then the built-in sign-out page's button.
    await page.getByRole('link', { name: 'Sign out' }).click()
    await page.waitForURL((url) => url.pathname === '/api/auth/signout')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${rig.origin}/`)
    await expect(page.locator('body').innerText()).resolves.toContain('You are not signed in.')

    // Protected again.
    await page.goto(`${rig.origin}/dashboard`)
    expect(page.url()).toBe(`${rig.origin}/api/auth/signin?callbackUrl=%2Fdashboard`)
  })
}

/**
 * `portcullis/client` in a real browser (Debian's Chromium, driven by playwright-core) against the
 * example server (examples/express): the built module (dist/client, as an app serves it) loaded by
 * a page of the app's origin, signing in with credentials, an e-mail link and the dev OIDC IdP,
 * a second tab following each change, and signing out.
 *
 * The app is reached as http://localhost:<port> and the IdP as http://127.0.0.1:<port>: two sites,
 * as with a real provider. Without /usr/bin/chromium the suite skips with a line saying so; with
 * `CI` set it fails instead. A screenshot of the test page after the OIDC sign-in goes to the OS
 * temp directory.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import type { BrowserContext, Page } from 'playwright-core'
import type * as Client from 'portcullis/client'
import type { DevIdp } from '../../examples/express/dev-idp.js'
import { ensureClientBuilt, serveExpressExample, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { CLIENT_DIR, CLIENT_TEST_PAGE, nthSession, openTestPage as openPage, sessionCount, type TestWindow } from '../support/client-page.js'
import { startQuietDevIdp } from '../support/dev-idp.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

const TITLE = 'portcullis/client in Chromium against examples/express'
const SCREENSHOT = join(tmpdir(), 'portcullis-client-oidc.png')

describeWithChromium(TITLE, browserSuite)

function browserSuite() {
  const rig = useBrowserRig()
  let idp: DevIdp
  let smtp: TestSmtpServer
  let context: BrowserContext
  let first: Page
  let second: Page

  const openTestPage = (page: Page, path = '/client-test') => openPage(page, `${rig.origin}${path}`)

  beforeAll(async () => {
    // The origin comes from Host, as in development; said once here instead of warned in the log.
    process.env.AUTH_TRUST_HOST ??= 'true'
    // The browser loads the built module; `npm test` builds first, this keeps `npx jest` on its own honest.
    ensureClientBuilt()
    ;[idp, smtp] = await Promise.all([startQuietDevIdp({ host: '127.0.0.1', clientRedirectUri: `${rig.origin}/api/auth/callback/dev-idp` }), startSmtpServer()])
  })
  serveExpressExample(
    rig,
    () => ({ devIdp: idp, emailServer: smtp.url }),
    (example) => {
      const app = express()
      app.use('/portcullis/client', express.static(CLIENT_DIR))
      app.get('/client-test', (_req, res) => void res.type('html').send(CLIENT_TEST_PAGE))
      return app.use(example)
    },
  )
  beforeAll(async () => {
    context = await rig.newContext({ viewport: { width: 800, height: 600 } })
    first = await context.newPage()
    second = await context.newPage()
  })

  afterAll(async () => {
    await Promise.all([idp?.close(), smtp?.close()])
  })

  it('reads the providers, a CSRF token and no session; a wrong basePath is a typed error', async () => {
    await openTestPage(first)
    const read = await first.evaluate(async () => {
      const { client } = window as unknown as TestWindow
      return { providers: await client.getProviders(), csrfToken: await client.getCsrfToken(), session: await client.getSession() }
    })
    expect(Object.keys(read.providers).sort()).toEqual(['credentials', 'dev-idp', 'nodemailer', 'password'])
    expect(read.providers['dev-idp']).toMatchObject({ type: 'oidc', signinUrl: `${rig.origin}/api/auth/signin/dev-idp` })
    expect(read.csrfToken).toMatch(/^[0-9a-f]{32,}$/i)
    expect(read.session).toBeNull()
    expect(await nthSession(first, 1)).toBeNull()

    const wrongBasePath = await first.evaluate(async () => {
      const { client } = window as unknown as TestWindow
      client.configure({ basePath: '/no-auth-here' })
      try {
        await client.getSession()
        return 'resolved'
      } catch (error) {
        return { name: (error as Error).name, type: (error as Client.AuthClientError).type, status: (error as Client.AuthClientError).status }
      } finally {
        client.configure({ basePath: '/api/auth' })
      }
    })
    expect(wrongBasePath).toEqual({ name: 'AuthClientError', type: 'UnexpectedResponse', status: 404 })
  })

  it('signs in with credentials by fetch: a wrong password is a typed result, the right one a session both tabs see', async () => {
    await openTestPage(second)
    const wrong = await first.evaluate(() =>
      (window as unknown as TestWindow).client.signIn('credentials', { username: 'ada', password: 'wrong', redirect: false }),
    )
    expect(wrong).toEqual({ ok: false, status: 200, url: null, error: 'CredentialsSignin', code: 'credentials' })

    const before = await sessionCount(second)
    const right = await first.evaluate(() =>
      (window as unknown as TestWindow).client.signIn('credentials', { username: 'ada', password: 'lovelace', callbackUrl: '/dashboard', redirect: false }),
    )
    expect(right).toEqual({ ok: true, status: 200, url: `${rig.origin}/dashboard` })
    // This tab's listener, told by signIn, and the other tab's, told over the BroadcastChannel.
    expect((await nthSession(first, 2))?.user).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com' })
    expect((await nthSession(second, before + 1))?.user).toMatchObject({ email: 'ada@example.com' })
    const cookies = await context.cookies(rig.origin)
    expect(cookies.find((cookie) => cookie.name === 'authjs.session-token')).toMatchObject({ httpOnly: true, sameSite: 'Lax' })

    // POST /session with the CSRF token: the example has no session callback, so the session stands.
    const updated = await first.evaluate(() => (window as unknown as TestWindow).client.updateSession({ theme: 'dark' }))
    expect(updated?.user).toMatchObject({ email: 'ada@example.com' })
  })

  it('signs out from the second tab by fetch; the first tab sees it', async () => {
    const before = await sessionCount(first)
    const result = await second.evaluate(() => (window as unknown as TestWindow).client.signOut({ redirect: false }))
    expect(result).toEqual({ ok: true, status: 200, url: `${rig.origin}/client-test` })
    expect(await nthSession(first, before + 1)).toBeNull()
    expect(await second.evaluate(() => (window as unknown as TestWindow).client.getSession())).toBeNull()
  })

  it('signs in with an e-mail link; the other tab finds the new session when it is focused again', async () => {
    smtp.skipReceived()
    const sent = await first.evaluate(() =>
      (window as unknown as TestWindow).client.signIn('nodemailer', { email: 'lin@example.test', callbackUrl: '/client-test?via=email', redirect: false }),
    )
    expect(sent).toMatchObject({ ok: true, status: 200 })
    expect(new URL(sent!.url!).pathname).toBe('/api/auth/verify-request')
    const mail = await smtp.nextMessage()
    expect(mail.to).toEqual(['lin@example.test'])

    // The link, followed in the first tab: a navigation this module does not see.
    await first.goto(linkOf(mail))
    await first.waitForURL(`${rig.origin}/client-test?via=email`)
    expect((await nthSession(first, 1))?.user).toMatchObject({ email: 'lin@example.test' })

    const before = await sessionCount(second)
    await second.bringToFront()
    await second.evaluate(() => dispatchEvent(new Event('focus')))
    expect((await nthSession(second, before + 1))?.user).toMatchObject({ email: 'lin@example.test' })

    await first.evaluate(() => (window as unknown as TestWindow).client.signOut({ redirect: false }))
    expect(await nthSession(second, before + 2)).toBeNull()
  })

  it('signs in with the dev OIDC IdP (the authorization URL with redirect: false, else a form navigation), then signs out with a redirect', async () => {
    await openTestPage(first)
    const before = await sessionCount(second)
    // With redirect: false, the authorization URL to go to when the app chooses.
    const prepared = await first.evaluate(() => (window as unknown as TestWindow).client.signIn('dev-idp', { redirect: false }))
    expect(prepared).toMatchObject({ ok: true, status: 200 })
    expect(new URL(prepared!.url!).origin).toBe(idp.issuer)
    expect(new URL(prepared!.url!).searchParams.get('code_challenge_method')).toBe('S256')

    // By default signIn submits a form: the page leaves for the IdP.
    await Promise.all([
      first.waitForURL((url) => url.origin === idp.issuer),
      first.evaluate(() => void (window as unknown as TestWindow).client.signIn('dev-idp', { callbackUrl: '/client-test?via=oidc' })),
    ])
    await first.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'))
    await first.fill('input[name="login"]', 'grace')
    await first.fill('input[name="password"]', 'any password')
    // No consent page: the dev IdP sends the browser straight back.
    await first.getByRole('button', { name: 'Sign-in' }).click()
    await first.waitForURL(`${rig.origin}/client-test?via=oidc`)
    expect((await nthSession(first, 1))?.user).toMatchObject({ name: 'Grace', email: 'grace@example.test' })
    await first.screenshot({ path: SCREENSHOT })

    await second.evaluate(() => dispatchEvent(new Event('focus')))
    expect((await nthSession(second, before + 1))?.user).toMatchObject({ email: 'grace@example.test' })

    // The default: the page goes to callbackUrl once the server has ended the session.
    await Promise.all([
      first.waitForURL(`${rig.origin}/`),
      first.evaluate(() => void (window as unknown as TestWindow).client.signOut({ callbackUrl: '/' })),
    ])
    await expect(first.locator('body').innerText()).resolves.toContain('You are not signed in.')
    expect(await nthSession(second, before + 2)).toBeNull()
  })
}

/**
 * Confirming with a passkey in a real browser: Debian's Chromium with a virtual authenticator (the
 * passkey suites' rig, test/passkey/), the passkey app with `account` on. A session whose sign-in is
 * twenty minutes old asks to add a second passkey: the passkeys page's script is told to confirm and
 * goes to the confirmation page, whose "Sign in again with a passkey" leads to the sign-in page; the
 * passkey ceremony there signs in anew and comes back to the passkeys page, where adding the passkey
 * now works.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { passkeyApp, passkeyDatabase, type PasskeyApp } from '../passkey/passkey-app.js'

describeWithChromium('confirming a stale session with a passkey in Chromium', () => {
  const rig = useBrowserRig()
  let db: Knex
  let app: PasskeyApp

  beforeAll(async () => {
    db = await passkeyDatabase()
    app = passkeyApp(db, rig.origin, { config: { account: true } })
    app.app.get('/me', async (req, res) => void res.json(await app.auth(req)))
    rig.serve(app.app)
  })
  afterAll(() => db?.destroy())

  interface Device {
    context: BrowserContext
    page: Page
    cdp: CDPSession
    authenticatorId: string
  }

  /** A context with a virtual authenticator, without conditional UI (the test presses the buttons). */
  async function newDevice(): Promise<Device> {
    const context = await rig.newContext()
    await context.addInitScript(() => Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: async () => false }))
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    })
    return { context, page, cdp, authenticatorId }
  }

  const passkeysPage = () => `${rig.origin}/api/auth/passkeys`
  const listed = (device: Device) => device.page.locator('li[data-passkey-id]').count()
  const stored = async () => Number((await db('Authenticator').count({ n: '*' }))[0]!.n)

  it('sends a stale session adding a passkey to confirm, confirms by the passkey ceremony, and comes back to add it', async () => {
    await app.adapter.createUser({ email: 'ada@example.com', name: 'Ada', emailVerified: null })
    const device = await newDevice()
    const { csrfToken } = (await (await device.context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    expect((await device.context.request.post(`${rig.origin}/api/auth/callback/credentials`, { form: { csrfToken, email: 'ada@example.com' }, headers: { origin: rig.origin }, maxRedirects: 0 })).status()).toBe(302)

    // Fresh from the sign-in: the first passkey is added at once.
    await device.page.goto(passkeysPage())
    await Promise.all([device.page.waitForEvent('load'), device.page.getByRole('button', { name: 'Add a passkey' }).click()])
    expect(device.page.url()).toBe(passkeysPage())
    expect(await listed(device)).toBe(1)

    // The sign-in was twenty minutes ago (past account.recentSignInMaxAge, ten minutes).
    const sessionToken = (await device.context.cookies()).find((cookie) => cookie.name === 'authjs.session-token')!.value
    await app.adapter.updateSession({ sessionToken, confirmedAt: new Date(Date.now() - 20 * 60_000) })
    const before = (await app.adapter.getSessionConfirmation!(sessionToken))!.confirmedAt!.getTime()

    // Adding a second one: the options are refused, and the script goes to confirm.
    await device.page.goto(passkeysPage())
    await device.page.getByRole('button', { name: 'Add a passkey' }).click()
    await device.page.waitForURL((url) => url.pathname === '/api/auth/account/confirm')
    expect(new URL(device.page.url()).searchParams.get('callbackUrl')).toBe(passkeysPage())
    expect(await stored()).toBe(1)

    // The confirmation page's passkey way: the sign-in page, its ceremony, and back.
    await device.page.getByRole('link', { name: 'Sign in again with a passkey' }).click()
    await device.page.waitForURL((url) => url.pathname === '/api/auth/signin')
    await device.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await device.page.waitForURL(passkeysPage())
    const renewed = (await device.context.cookies()).find((cookie) => cookie.name === 'authjs.session-token')!.value
    const confirmation = await app.adapter.getSessionConfirmation!(renewed)
    expect(confirmation!.confirmedAt!.getTime()).toBeGreaterThan(before + 15 * 60_000)
    expect(confirmation!.confirmedWith).toBe('passkey')

    // The action, done: the second passkey is added (by a second authenticator of the device: the
    // first holds a passkey of this site already, which the registration's options exclude).
    await device.cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    })
    await Promise.all([device.page.waitForEvent('load'), device.page.getByRole('button', { name: 'Add a passkey' }).click()])
    expect(device.page.url()).toBe(passkeysPage())
    expect(await listed(device)).toBe(2)
    expect(await stored()).toBe(2)
    await device.context.close()
  })
})

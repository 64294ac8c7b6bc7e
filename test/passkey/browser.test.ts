/**
 * Passkeys in a real browser: Debian's Chromium (playwright-core) with a virtual authenticator
 * through the DevTools protocol (`WebAuthn.addVirtualAuthenticator`: CTAP2, internal transport,
 * resident keys, user verification), against the app of passkey-app.ts on http://localhost:<port>.
 *
 * It registers a passkey from the passkeys page when signed in, signs in with it by the button and
 * through conditional UI (database sessions, and JWT sessions on a second app), and attacks every rule: a cloned authenticator whose counter went back, a
 * replayed response (the challenge is single use), a response sent with another browser's challenge
 * cookie, a response signed for another origin, removing the last way to sign in, registering while
 * signed out. One browser for the file; each test its own contexts (cookies, authenticator).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import type { Server } from 'node:http'
import type { Knex } from 'knex'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { closeLocal, listenLocal, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { passkeyApp, passkeyDatabase, type PasskeyApp } from './passkey-app.js'

const TITLE = 'passkeys in Chromium with a virtual authenticator'

describeWithChromium(TITLE, browserSuite)

/** A credential as `WebAuthn.getCredentials` returns it. */
interface VirtualCredential {
  credentialId: string
  isResidentCredential: boolean
  rpId: string
  privateKey: string
  userHandle: string
  signCount: number
}

/** A browser context with a virtual authenticator, and one page in it. */
interface Device {
  context: BrowserContext
  page: Page
  cdp: CDPSession
  authenticatorId: string
}

function browserSuite() {
  const rig = useBrowserRig()
  let db: Knex
  let app: PasskeyApp
  let users = 0
  // The same app on a second port: another origin (the RP ID, localhost, is the same).
  let otherServer: Server
  let otherOrigin: string
  // A second app on the same database with JWT sessions, on a third port (its passkeys' origin).
  let jwtServer: Server
  let jwtOrigin: string
  const signIns: { type: string | undefined; email: string | null | undefined }[] = []

  beforeAll(async () => {
    db = await passkeyDatabase()
    app = passkeyApp(db, rig.origin)
    rig.serve(app.app)
    ;({ server: otherServer, origin: otherOrigin } = await listenLocal(app.app))
    let jwtApp: PasskeyApp['app'] | undefined
    ;({ server: jwtServer, origin: jwtOrigin } = await listenLocal((req, res) => jwtApp!(req, res)))
    jwtApp = passkeyApp(db, jwtOrigin, {
      config: {
        session: { strategy: 'jwt' },
        callbacks: { signIn: ({ account }) => account?.type === 'webauthn' && account.provider === 'passkey' },
        events: { signIn: ({ user, account }) => void signIns.push({ type: account?.type, email: user.email }) },
      },
    }).app
  })
  afterAll(async () => {
    await Promise.all([otherServer, jwtServer].filter(Boolean).map(closeLocal))
    await db?.destroy()
  })

  /** A new browser context with its own virtual authenticator (and, with `credential`, a copy of that passkey). */
  async function newDevice(options: { conditional?: boolean; credential?: VirtualCredential } = {}): Promise<Device> {
    const context = await rig.newContext()
    // A browser without conditional UI, where a test is about the button.
    if (options.conditional === false) await context.addInitScript(() => Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: async () => false }))
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    })
    if (options.credential) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: options.credential })
    return { context, page, cdp, authenticatorId }
  }

  async function credentialsOf(device: Device): Promise<VirtualCredential[]> {
    return ((await device.cdp.send('WebAuthn.getCredentials', { authenticatorId: device.authenticatorId })) as { credentials: VirtualCredential[] }).credentials
  }

  async function newUser(): Promise<string> {
    const email = `user${++users}@example.com`
    await app.adapter.createUser({ email, name: `User ${users}`, emailVerified: null })
    return email
  }

  /**
   * Signs `device` in with the credentials provider, by a POST from its context (not the sign-in
   * page: there, a device with a passkey would sign in by conditional UI before the form is used).
   */
  async function signInWithEmail(device: Device, email: string): Promise<void> {
    const { csrfToken } = (await (await device.context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const answer = await device.context.request.post(`${rig.origin}/api/auth/callback/credentials`, { form: { csrfToken, email }, headers: { origin: rig.origin }, maxRedirects: 0 })
    expect(answer.status()).toBe(302)
    expect(await signedInAs(device)).toBe(email)
  }

  /** The e-mail address of the session of `device`, or null. */
  async function signedInAs(device: Device): Promise<string | null> {
    const answer = await device.context.request.get(`${rig.origin}/me`)
    const session = (await answer.json()) as { user?: { email?: string } } | null
    return session?.user?.email ?? null
  }

  /** Registers a passkey from the passkeys page (signed in already). */
  async function addPasskey(device: Device): Promise<void> {
    await device.page.goto(`${rig.origin}/api/auth/passkeys`)
    const before = await device.page.locator('li[data-passkey-id]').count()
    // The script posts the form once the authenticator answered: the page loads again.
    await Promise.all([device.page.waitForEvent('load'), device.page.getByRole('button', { name: 'Add a passkey' }).click()])
    expect(device.page.url()).toBe(`${rig.origin}/api/auth/passkeys`)
    await expect(device.page.locator('li[data-passkey-id]').count()).resolves.toBe(before + 1)
  }

  /** Signs out by forgetting the cookies (the passkey stays on the authenticator). */
  async function forgetCookies(device: Device): Promise<void> {
    await device.context.clearCookies()
  }

  /** Clicks "Sign in with a passkey" on the sign-in page, and waits for where it lands. */
  async function signInWithPasskeyButton(device: Device, origin = rig.origin): Promise<URL> {
    await device.page.goto(`${origin}/api/auth/signin?callbackUrl=%2Fme`)
    await device.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await device.page.waitForURL((url) => url.pathname !== '/api/auth/signin' || url.searchParams.has('error'))
    return new URL(device.page.url())
  }

  /** A user signed in on a device with one registered passkey, then signed out. */
  async function userWithPasskey(options: { conditional?: boolean } = {}): Promise<{ device: Device; email: string }> {
    const email = await newUser()
    const device = await newDevice(options)
    await signInWithEmail(device, email)
    await addPasskey(device)
    await forgetCookies(device)
    return { device, email }
  }

  it('registers a passkey when signed in, and signs in with it by the button after signing out', async () => {
    const { device, email } = await userWithPasskey({ conditional: false })
    const [credential] = await credentialsOf(device)
    expect(credential).toMatchObject({ isResidentCredential: true, rpId: 'localhost' })
    // Stored as Auth.js stores it: standard base64 (CDP gives the id in that form too).
    const stored = await app.adapter.getAuthenticator(credential!.credentialId)
    expect(stored).toMatchObject({ providerAccountId: credential!.credentialId, credentialDeviceType: 'singleDevice', transports: 'internal' })
    expect(await app.adapter.getAccount(credential!.credentialId, 'passkey')).toMatchObject({ type: 'webauthn', userId: stored!.userId })

    expect(await signedInAs(device)).toBeNull()
    const landed = await signInWithPasskeyButton(device)
    expect(landed.href).toBe(`${rig.origin}/me`)
    expect(await signedInAs(device)).toBe(email)
    // The counter moved on and was stored; the challenge cookie is gone.
    expect((await app.adapter.getAuthenticator(credential!.credentialId))!.counter).toBeGreaterThan(stored!.counter)
    expect((await device.context.cookies()).map((cookie) => cookie.name)).not.toContain('authjs.challenge')
    await device.context.close()
  })

  it('signs in with JWT sessions too, through the signIn callback and event, with a webauthn account', async () => {
    const { device, email } = await userWithPasskey({ conditional: false })
    const [credential] = await credentialsOf(device)
    const landed = await signInWithPasskeyButton(device, jwtOrigin)
    expect(landed.href).toBe(`${jwtOrigin}/me`)
    const session = (await (await device.context.request.get(`${jwtOrigin}/me`)).json()) as { user: { id: string; email: string } }
    expect(session.user).toMatchObject({ email, id: (await app.adapter.getAuthenticator(credential!.credentialId))!.userId })
    // A sealed JWT, not a database session's random token.
    const cookie = (await device.context.cookies(jwtOrigin)).find((each) => each.name === 'authjs.session-token')!
    expect(cookie.value.split('.')).toHaveLength(5)
    expect(signIns).toContainEqual({ type: 'webauthn', email })
    await device.context.close()
  })

  it('signs in through conditional UI: the passkey offered in the e-mail field\'s autofill', async () => {
    const { device, email } = await userWithPasskey()
    const signInUrl = `${rig.origin}/api/auth/signin?callbackUrl=%2Fme`
    const html = await (await device.context.request.get(signInUrl)).text()
    expect(html).toMatch(/<input [^>]*type="email"[^>]*autocomplete="username webauthn"/)
    expect(html).toContain('data-passkey-conditional')
    // No button pressed: the conditional request the script starts on load is answered by the
    // authenticator as the browser's autofill would be (before the page has even finished loading,
    // hence `commit`), and the form submits itself.
    await device.page.goto(signInUrl, { waitUntil: 'commit' })
    await device.page.waitForURL(`${rig.origin}/me`)
    expect(await signedInAs(device)).toBe(email)
    await device.context.close()
  })

  /** A passkey POST the browser made: its body and the cookies it carried. */
  interface CapturedPost {
    body: string
    contentType: string
    cookies: Record<string, string>
  }

  /**
   * Records the next passkey callback POST of `device` (its body and cookies); `abort` stops it
   * there, so the server never sees it.
   */
  async function capturePasskeyPost(device: Device, abort: boolean): Promise<{ captured: Promise<CapturedPost> }> {
    let resolve: (post: CapturedPost) => void
    const captured = new Promise<CapturedPost>((done) => (resolve = done))
    await device.page.route('**/api/auth/callback/passkey', async (route) => {
      const request = route.request()
      const cookies = Object.fromEntries((await device.context.cookies(request.url())).map((cookie) => [cookie.name, cookie.value]))
      resolve({ body: request.postData() ?? '', contentType: (await request.allHeaders())['content-type'] ?? '', cookies })
      await (abort ? route.abort() : route.continue())
    })
    return { captured }
  }

  /** Sends a captured POST again from outside the browser (same origin, as a replaying attacker would), with `cookies`; where it redirects. */
  async function replay(post: CapturedPost, cookies: Record<string, string>): Promise<URL> {
    const answer = await fetch(`${rig.origin}/api/auth/callback/passkey`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': post.contentType,
        origin: rig.origin,
        cookie: Object.entries(cookies)
          .map(([name, value]) => `${name}=${value}`)
          .join('; '),
      },
      body: post.body,
    })
    expect(answer.status).toBe(302)
    return new URL(answer.headers.get('location')!, rig.origin)
  }

  /** The sign-in page's verdict on a refused passkey: `code` of a WebAuthnVerificationError. */
  function refusedWith(url: URL): string | null {
    expect(url.pathname).toBe('/api/auth/signin')
    expect(url.searchParams.get('error')).toBe('WebAuthnVerificationError')
    return url.searchParams.get('code')
  }

  it('refuses a cloned authenticator whose signature counter went back, and lets the original (and a clone counting past it) in', async () => {
    const { device, email } = await userWithPasskey({ conditional: false })
    expect((await signInWithPasskeyButton(device)).pathname).toBe('/me')
    const [credential] = await credentialsOf(device)
    const stored = (await app.adapter.getAuthenticator(credential!.credentialId))!.counter
    expect(stored).toBeGreaterThan(0)

    // A copy of the key that has counted less than the original: the next response reports at most `stored`.
    const clone = await newDevice({ conditional: false, credential: { ...credential!, signCount: 0 } })
    expect(refusedWith(await signInWithPasskeyButton(clone))).toBe('counter_replayed')
    expect(await signedInAs(clone)).toBeNull()
    expect((await app.adapter.getAuthenticator(credential!.credentialId))!.counter).toBe(stored)

    // The control: the same key counting past the stored value is accepted (WebAuthn cannot tell it apart).
    const ahead = await newDevice({ conditional: false, credential: { ...credential!, signCount: stored + 10 } })
    expect((await signInWithPasskeyButton(ahead)).pathname).toBe('/me')
    expect(await signedInAs(ahead)).toBe(email)
    for (const each of [device, clone, ahead]) await each.context.close()
  })

  it('refuses a replayed response: the challenge is single use, even for a passkey whose counter does not move', async () => {
    const { device, email } = await userWithPasskey({ conditional: false })
    const [credential] = await credentialsOf(device)
    const before = (await app.adapter.getAuthenticator(credential!.credentialId))!.counter
    const post = await capturePasskeyPost(device, false)
    expect((await signInWithPasskeyButton(device)).pathname).toBe('/me')
    expect(await signedInAs(device)).toBe(email)

    // Set the stored counter back, as for a synced passkey (always 0): only the challenge stops the replay now.
    await app.db('Authenticator').update({ counter: before }).where({ credentialID: credential!.credentialId })
    const captured = await post.captured
    expect(refusedWith(await replay(captured, captured.cookies))).toBe('challenge_used')
    expect(app.logger.codes('warn')).toContain('WebAuthnVerificationError')
    await device.context.close()
  })

  it("refuses a response sent with another browser's challenge cookie; with its own browser's cookie it signs in", async () => {
    const { device, email } = await userWithPasskey({ conditional: false })
    const post = await capturePasskeyPost(device, true)
    await device.page.goto(`${rig.origin}/api/auth/signin?callbackUrl=%2Fme`)
    await device.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    const captured = await post.captured

    // Another browser asks for options: its cookie holds a challenge of its own, unused.
    const other = await rig.newContext()
    expect((await other.request.get(`${rig.origin}/api/auth/webauthn-options/passkey?action=authenticate`)).status()).toBe(200)
    const otherChallenge = (await other.cookies(rig.origin)).find((cookie) => cookie.name === 'authjs.challenge')!.value
    expect(otherChallenge).not.toBe(captured.cookies['authjs.challenge'])

    expect(refusedWith(await replay(captured, { ...captured.cookies, 'authjs.challenge': otherChallenge }))).toBe('challenge_mismatch')
    // The control: the response with the cookie of the browser that made it.
    const accepted = await replay(captured, captured.cookies)
    expect(accepted.href).toBe(`${rig.origin}/me`)
    expect(email).toContain('@')
    await other.close()
    await device.context.close()
  })

  it('refuses a response the browser signed for another origin (same RP ID, another port)', async () => {
    const { device } = await userWithPasskey({ conditional: false })
    const landed = await signInWithPasskeyButton(device, otherOrigin)
    expect(landed.origin).toBe(otherOrigin)
    expect(refusedWith(landed)).toBe('origin_mismatch')
    expect(await signedInAs(device)).toBeNull()
    await device.context.close()
  })

  it('removes a passkey from the passkeys page, and refuses to remove the last way to sign in', async () => {
    const { device, email } = await userWithPasskey()
    // A second passkey, from another device of the same user.
    const second = await newDevice()
    await signInWithEmail(second, email)
    await addPasskey(second)
    await second.context.close()

    await signInWithEmail(device, email)
    await device.page.goto(`${rig.origin}/api/auth/passkeys`)
    const rows = device.page.locator('li[data-passkey-id]')
    await expect(rows.count()).resolves.toBe(2)
    const removed = (await rows.first().getAttribute('data-passkey-id'))!
    await Promise.all([device.page.waitForEvent('load'), rows.first().getByRole('button', { name: 'Remove' }).click()])
    await expect(rows.count()).resolves.toBe(1)
    expect(await app.adapter.getAuthenticator(removed)).toBeNull()
    expect(await app.adapter.getAccount(removed, 'passkey')).toBeNull()

    // The last passkey is this user's only way in (credentials are the app's business, not counted).
    const last = (await rows.first().getAttribute('data-passkey-id'))!
    await Promise.all([device.page.waitForEvent('load'), rows.first().getByRole('button', { name: 'Remove' }).click()])
    expect(new URL(device.page.url()).searchParams.get('error')).toBe('last_sign_in_method')
    await expect(device.page.getByRole('alert').innerText()).resolves.toContain('last way to sign in')
    await expect(rows.count()).resolves.toBe(1)
    expect(await app.adapter.getAuthenticator(last)).not.toBeNull()
    await device.context.close()
  })

  it('refuses a registration from a browser that is not signed in, for the options and for the response', async () => {
    const device = await newDevice()
    const options = await device.context.request.get(`${rig.origin}/api/auth/webauthn-options/passkey?action=register`)
    expect(options.status()).toBe(401)
    expect(await options.json()).toMatchObject({ error: 'Unauthorized' })
    expect((await device.context.cookies()).map((cookie) => cookie.name)).not.toContain('authjs.challenge')

    const { csrfToken } = (await (await device.context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const answer = await device.context.request.post(`${rig.origin}/api/auth/callback/passkey`, {
      form: { csrfToken, action: 'register', data: '{}' },
      headers: { origin: rig.origin },
      maxRedirects: 0,
    })
    expect(answer.status()).toBe(302)
    expect(refusedWith(new URL(answer.headers().location!))).toBe('not_signed_in')
    await device.context.close()
  })
}

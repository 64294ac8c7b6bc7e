/**
 * `portcullis/client` in Chromium against the real Auth.js (`@auth/core`, the front end of
 * examples/authjs-interop): the module talks to the routes Auth.js's own clients use, so it signs
 * in, reads, updates and ends an Auth.js session too, and reads a failed sign-in from the URL of
 * Auth.js's sign-in page (Auth.js puts no `error` in its JSON answer).
 *
 * Without /usr/bin/chromium the suite skips with a line saying so; with `CI` set it fails instead.
 */
import { beforeAll, expect, it } from '@jest/globals'
import express from 'express'
import type { Page } from 'playwright-core'
import { frontendListener } from '../../examples/authjs-interop/frontend.js'
import { ensureClientBuilt, useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { CLIENT_DIR, CLIENT_TEST_PAGE, nthSession, openTestPage, sessionCount, type TestWindow } from '../support/client-page.js'

describeWithChromium('portcullis/client in Chromium against Auth.js (@auth/core)', () => {
  const rig = useBrowserRig()
  let first: Page
  let second: Page
  /** What Auth.js logged as errors (the wrong password), instead of the console. */
  const authjsErrors: string[] = []

  beforeAll(async () => {
    ensureClientBuilt()
    const app = express()
    app.use('/portcullis/client', express.static(CLIENT_DIR))
    app.get('/client-test', (_req, res) => void res.type('html').send(CLIENT_TEST_PAGE))
    const authjs = frontendListener('test-secret-for-the-authjs-client-test-0123456789', { error: (error) => void authjsErrors.push(error.name) })
    app.use((req, res) => void authjs(req, res))
    rig.serve(app)
    const context = await rig.newContext()
    ;[first, second] = await Promise.all([context.newPage(), context.newPage()])
  })

  it('reads the providers and no session', async () => {
    await openTestPage(first, `${rig.origin}/client-test`)
    const providers = await first.evaluate(() => (window as unknown as TestWindow).client.getProviders())
    expect(providers.credentials).toMatchObject({ id: 'credentials', type: 'credentials', signinUrl: `${rig.origin}/api/auth/signin/credentials` })
    expect(await nthSession(first, 1)).toBeNull()
  })

  it("reports Auth.js's failed credentials sign-in with its codes, signs in, updates and signs out, both tabs following", async () => {
    await openTestPage(second, `${rig.origin}/client-test`)
    const wrong = await first.evaluate(() =>
      (window as unknown as TestWindow).client.signIn('credentials', { username: 'ada', password: 'wrong', redirect: false }),
    )
    expect(wrong).toEqual({ ok: false, status: 200, url: null, error: 'CredentialsSignin', code: 'credentials' })
    expect(authjsErrors).toEqual(['CredentialsSignin'])

    // An `error` parameter of the app's own callback URL is no failure: only Auth.js's pages carry its codes.
    const right = await first.evaluate(() =>
      (window as unknown as TestWindow).client.signIn('credentials', { username: 'ada', password: 'lovelace', callbackUrl: '/after?error=none', redirect: false }),
    )
    expect(right).toEqual({ ok: true, status: 200, url: `${rig.origin}/after?error=none` })
    expect((await nthSession(first, 2))?.user).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' })
    expect((await nthSession(second, 2))?.user).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' })

    const updated = await first.evaluate(() => (window as unknown as TestWindow).client.updateSession({ theme: 'dark' }))
    expect(updated?.user).toMatchObject({ email: 'ada@example.com' })

    const before = await sessionCount(first)
    const signedOut = await second.evaluate(() => (window as unknown as TestWindow).client.signOut({ redirect: false }))
    expect(signedOut).toMatchObject({ ok: true, status: 200 })
    expect(await nthSession(first, before + 1)).toBeNull()
  })
})

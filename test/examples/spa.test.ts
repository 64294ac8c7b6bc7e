/**
 * Runs examples/spa the way its README starts it (`tsx examples/spa/server.ts`, after the build
 * the test suite does anyway) and drives its page in Chromium: a wrong and a right password, a
 * second tab following, the JSON route, sign-out, the dev identity provider, and an e-mail link
 * (mailed to an in-process SMTP server through AUTH_EMAIL_SERVER).
 *
 * Without /usr/bin/chromium the suite skips with a line saying so; with `CI` set it fails instead.
 * Screenshots of the page signed out and signed in go to the OS temp directory.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'
import { ensureClientBuilt, useChromium } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { startExampleProcess, type ExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SCREENSHOTS = { signedOut: join(tmpdir(), 'portcullis-spa-signed-out.png'), signedIn: join(tmpdir(), 'portcullis-spa-signed-in.png') }

describeWithChromium('examples/spa: the page and portcullis/client in Chromium', () => {
  let server: ExampleProcess
  let dir: string
  let smtp: TestSmtpServer
  const chromium = useChromium()
  let context: BrowserContext
  let first: Page
  let second: Page
  const port = examplePort(2)
  const origin = `http://localhost:${port}`

  const status = (page: Page) => page.locator('#status')

  beforeAll(async () => {
    ensureClientBuilt()
    dir = mkdtempSync(join(tmpdir(), 'portcullis-spa-'))
    smtp = await startSmtpServer()
    server = await startExampleProcess(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/spa/server.ts'], {
      cwd: root,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PORT: String(port),
        DEV_IDP_PORT: String(port + 1),
        DATABASE_FILE: join(dir, 'spa.sqlite'),
        AUTH_SECRET: 'test-secret-for-the-spa-example-0123456789',
        AUTH_TRUST_HOST: 'true',
        AUTH_EMAIL_SERVER: smtp.url,
      },
      ready: 'running at',
      // tsx compiles the server and the example's IdP on start: ~3 s alone, 15 s and more beside the rest of the suite on 2 cores.
      name: 'the server',
    })
    context = await chromium.newContext({ viewport: { width: 800, height: 700 } })
    ;[first, second] = await Promise.all([context.newPage(), context.newPage()])
  })

  afterAll(async () => {
    await server?.stop()
    await smtp?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('starts with the command of its README and shows the sign-in forms to a signed-out visitor', async () => {
    expect(server.output).toContain(`Portcullis SPA example running at ${origin}`)
    await first.goto(origin)
    await first.waitForFunction(() => document.getElementById('status')?.textContent === 'You are not signed in.')
    await first.getByRole('button', { name: 'Sign in with Local dev identity provider' }).waitFor()
    await first.screenshot({ path: SCREENSHOTS.signedOut, fullPage: true })
  })

  it('says so for a wrong password; signs in with the right one without reloading, and the second tab follows', async () => {
    await second.goto(origin)
    await second.waitForFunction(() => document.getElementById('status')?.textContent === 'You are not signed in.')
    // Marks the document: still there afterwards means no reload.
    await first.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true))

    await first.fill('input[name="username"]', 'ada')
    await first.fill('input[name="password"]', 'wrong')
    await first.getByRole('button', { name: 'Sign in', exact: true }).click()
    await first.getByText('Wrong username or password.').waitFor()

    await first.fill('input[name="password"]', 'lovelace')
    await first.getByRole('button', { name: 'Sign in', exact: true }).click()
    await first.getByText('Signed in as Ada Lovelace (ada@example.com).').waitFor()
    await second.getByText('Signed in as Ada Lovelace (ada@example.com).').waitFor()
    expect(await first.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true)

    await first.getByRole('button', { name: 'Call /api/me' }).click()
    await first.getByText('"email": "ada@example.com"').waitFor()
    await expect(first.locator('#api-answer').textContent()).resolves.toMatch(/^200 /)
    await first.screenshot({ path: SCREENSHOTS.signedIn, fullPage: true })
  })

  it('signs out in the second tab; the first follows and /api/me refuses', async () => {
    await second.getByRole('button', { name: 'Sign out' }).click()
    await second.getByText('You are not signed in.').waitFor()
    await first.getByText('You are not signed in.').waitFor()
    const me = await first.evaluate(async () => (await fetch('/api/me')).status)
    expect(me).toBe(401)
  })

  it('signs in with the local dev identity provider and comes back to the page', async () => {
    await first.getByRole('button', { name: 'Sign in with Local dev identity provider' }).click()
    await first.waitForURL((url) => url.pathname.startsWith('/interaction/'))
    await first.fill('input[name="login"]', 'grace')
    await first.fill('input[name="password"]', 'any password')
    // No consent page: the dev IdP sends the browser straight back.
    await first.getByRole('button', { name: 'Sign-in' }).click()
    await first.waitForURL(`${origin}/`)
    await first.getByText('Signed in as Grace (grace@example.test).').waitFor()
    await first.getByRole('button', { name: 'Sign out' }).click()
    await first.getByText('You are not signed in.').waitFor()
  })

  it('sends an e-mail link and signs in when it is opened', async () => {
    smtp.skipReceived()
    await first.fill('input[name="email"]', 'lin@example.test')
    await first.getByRole('button', { name: 'Send me a link' }).click()
    await first.getByText('A sign-in link is on its way to lin@example.test.').waitFor()
    const mail = await smtp.nextMessage()
    await first.goto(linkOf(mail))
    await first.waitForURL(`${origin}/`)
    await first.getByText('Signed in as lin@example.test (lin@example.test).').waitFor()
  })
})

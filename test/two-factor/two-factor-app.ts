/**
 * Shared steps of the second-factor suites: an app with a credentials provider on a migrated
 * database (users created directly; the password is "pw"), `twoFactor` on, and the browser's side of
 * each page: sign in, enrol through the settings page (its key read off the page, the codes made
 * by otpauth as an authenticator app would), give a code on the second page.
 */
import { jest } from '@jest/globals'
import type { Knex } from 'knex'
import { Secret, TOTP } from 'otpauth'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { Browser } from '../support/browser.js'
import { post } from '../password/password-app.js'
import { SECRET } from '../support/flow.js'
import type { Listener } from '../support/oauth-app.js'

export { Browser }
// The browser's side of a form: its CSRF token, and a POST with it.
export { csrfOf, post } from '../password/password-app.js'

/** A step boundary: 2026-11-25T12:00:00Z. */
export const T0 = Date.UTC(2026, 10, 25, 12, 0, 0)

/** Freezes `Date` (only: timers, sockets and promises run as usual) at `ms`. */
export function freezeClock(ms: number): void {
  jest.useFakeTimers({ now: ms, doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] })
}

/** The code an authenticator app shows for `secret` at `ms`. */
export function codeAt(secret: string, ms: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms })
}

/** Portcullis on `listener`: credentials sign-in of stored users (password "pw"), database sessions, `twoFactor` on. */
export function mountTwoFactorApp(listener: Listener, knex: Knex, config: Partial<PortcullisConfig> = {}): AuthApp {
  const adapter = KnexAdapter(knex)
  const app = authApp({
    secret: SECRET,
    adapter,
    providers: [
      Credentials({
        // `memorable`: a secret field whose name does not say so; only its declared type does.
        credentials: { email: { label: 'E-mail' }, password: { label: 'Password', type: 'password' }, memorable: { label: 'Memorable word', type: 'password' } },
        authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null),
      }),
    ],
    twoFactor: { issuer: 'Portcullis tests' },
    ...config,
  })
  app.app.get('/', (_req, res) => void res.send('home'))
  listener.mount(app.app)
  return app
}

/** The first factor: the credentials form. */
export function signIn(browser: Browser, appUrl: string, email: string, callbackUrl = '/dashboard'): Promise<Response> {
  return post(browser, appUrl, 'callback/credentials', { email, password: 'pw', callbackUrl })
}

/** The second page's form. */
export function giveCode(browser: Browser, appUrl: string, code: string): Promise<Response> {
  return post(browser, appUrl, 'two-factor', { code })
}

/**
 * Enrols the signed-in user of `browser` through the settings page at `ms`.
 * @returns The key the page showed and the recovery codes it listed.
 */
export async function enrol(browser: Browser, appUrl: string, ms: number): Promise<{ secret: string; recoveryCodes: string[] }> {
  const page = await (await browser.request(`${appUrl}/api/auth/two-factor/setup`)).text()
  const secret = /<code class="secret">([^<]+)<\/code>/.exec(page)?.[1]?.replace(/\s/g, '')
  if (!secret) throw new Error(`the setup page shows no key:\n${page}`)
  const confirmed = await post(browser, appUrl, 'two-factor/setup', { code: codeAt(secret, ms) })
  if (confirmed.status !== 200) throw new Error(`confirming answered ${confirmed.status}`)
  return { secret, recoveryCodes: recoveryCodesOf(await confirmed.text()) }
}

/** The recovery codes a page lists. */
export function recoveryCodesOf(page: string): string[] {
  const list = /<ul class="codes" data-recovery-codes>(.*?)<\/ul>/s.exec(page)?.[1] ?? ''
  return [...list.matchAll(/<li>([^<]+)<\/li>/g)].map((match) => match[1]!)
}

/**
 * Shared steps of the password suites: an app with the Password provider on a migrated database,
 * its mails sent to the in-process SMTP server (smtp-server), and the browser's side of each form
 * (CSRF token, POST, the link of the captured mail). Tests hash with scrypt at N = 2^14 (the
 * defaults take ~0.5 s a hash here); one suite checks the defaults.
 */
import type { Knex } from 'knex'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Password, { scryptHasher, type PasswordOptions } from 'portcullis/providers/password'
import { Browser } from '../support/browser.js'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { SECRET } from '../support/flow.js'
import type { Listener } from '../support/oauth-app.js'
import { linkOf, type TestSmtpServer } from '../support/smtp.js'

export const FROM = 'Portcullis tests <auth@example.test>'
export const FAST_HASHING = scryptHasher({ N: 2 ** 14 })
export const GOOD_PASSWORD = 'correct horse battery staple'

/** Portcullis on `listener` with the Password provider, the Knex adapter on `knex`, mail to `smtp`. */
export function mountPasswordApp(
  listener: Listener,
  knex: Knex,
  smtp: Pick<TestSmtpServer, 'url'>,
  config: Partial<PortcullisConfig> = {},
  options: PasswordOptions = {},
): AuthApp {
  const app = authApp({ secret: SECRET, adapter: KnexAdapter(knex), providers: [Password({ server: smtp.url, from: FROM, hashing: FAST_HASHING, ...options })], ...config })
  app.app.get('/', (_req, res) => void res.send('home'))
  listener.mount(app.app)
  return app
}

/** The CSRF token of `browser` (its cookie set on the way). */
export async function csrfOf(browser: Browser, appUrl: string): Promise<string> {
  return ((await (await browser.request(`${appUrl}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}

/** POSTs `fields` (with the CSRF token) to `/api/auth/<path>`. */
export async function post(browser: Browser, appUrl: string, path: string, fields: Record<string, string>): Promise<Response> {
  const body = new URLSearchParams({ csrfToken: await csrfOf(browser, appUrl), ...fields })
  return browser.request(`${appUrl}/api/auth/${path}`, { body })
}

export const signUp = (browser: Browser, appUrl: string, email: string, password = GOOD_PASSWORD, extra: Record<string, string> = {}) =>
  post(browser, appUrl, 'signup', { email, password, ...extra })

export const signIn = (browser: Browser, appUrl: string, email: string, password = GOOD_PASSWORD) => post(browser, appUrl, 'callback/password', { email, password })

/**
 * The link of the next mail (to `to`, when given: mails are sent after the answer, so one of an
 * earlier test may still arrive), and the mail.
 */
export async function nextLink(smtp: TestSmtpServer, to?: string): Promise<{ link: string; links: string[]; subject: string; to: string[] }> {
  for (;;) {
    const mail = await smtp.nextMessage()
    if (to !== undefined && !mail.to.includes(to)) continue
    // Most mails carry one link; the address-taken mail two (sign in, set a new password).
    const links = (mail.parsed.text ?? '').match(/https?:\/\/\S+/g) ?? []
    return { link: links.length === 1 ? linkOf(mail) : links[0]!, links, subject: mail.parsed.subject ?? '', to: mail.to }
  }
}

/** Signs up and follows the verification link in the same browser: signed in, address verified. */
export async function verifiedUser(browser: Browser, appUrl: string, smtp: TestSmtpServer, email: string, password = GOOD_PASSWORD): Promise<void> {
  const response = await signUp(browser, appUrl, email, password)
  if (response.status !== 302) throw new Error(`sign-up answered ${response.status}`)
  const { link } = await nextLink(smtp, email.toLowerCase())
  const verified = await browser.request(link)
  if (verified.status !== 302) throw new Error(`the verification link answered ${verified.status}`)
}

export { Browser }

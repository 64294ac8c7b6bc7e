/**
 * Shared steps of the sign-in code tests: an app with an EmailCode provider mailing through the
 * in-process SMTP server, and the browser's side (CSRF token, POST /signin/email-code, the code
 * from the captured mail, the code page's form).
 */
import type { Knex } from 'knex'
import type { PortcullisConfig, PortcullisResult } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import EmailCode, { type EmailCodeOptions } from 'portcullis/providers/email-code'
import { Browser } from '../support/browser.js'
import { mountApp, type Listener } from '../support/oauth-app.js'
import type { CapturedMail, TestSmtpServer } from '../support/smtp.js'
import { expect } from '@jest/globals'

export const FROM = 'Portcullis tests <auth@example.test>'

/** Portcullis on `listener` with an EmailCode provider sending to `smtp` and the Knex adapter on `knex`. */
export function mountCodeApp(listener: Listener, knex: Knex, smtp: Pick<TestSmtpServer, 'url'>, config: Partial<PortcullisConfig> = {}, options: EmailCodeOptions = {}): PortcullisResult {
  return mountApp(listener, { adapter: KnexAdapter(knex), providers: [EmailCode({ server: smtp.url, from: FROM, ...options })], ...config })
}

/** GET /csrf, then POST /signin/email-code with `email`: the response (200, the code page, when it worked). */
export async function askForCode(browser: Browser, appUrl: string, email: string, options: { callbackUrl?: string; csrfToken?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
  const { csrfToken } = (await (await browser.request(`${appUrl}/api/auth/csrf`)).json()) as { csrfToken: string }
  const token = options.csrfToken === undefined ? csrfToken : options.csrfToken
  const body = new URLSearchParams({ email, ...(token !== null && { csrfToken: token }), ...(options.callbackUrl && { callbackUrl: options.callbackUrl }) })
  return browser.request(`${appUrl}/api/auth/signin/email-code`, { body, headers: options.headers })
}

/** The six-digit code of a captured mail (its text part). */
export function codeOf(mail: CapturedMail): string {
  const match = /^(\d{6})$/m.exec(mail.parsed.text ?? '')
  if (!match) throw new Error(`no code in the mail: ${mail.parsed.text}`)
  return match[1]!
}

/** The POST the code page's form makes, with `code` typed in. */
export async function codeForm(browser: Browser, page: Response, code: string): Promise<{ url: string; body: URLSearchParams }> {
  expect(page.status).toBe(200)
  const form = await browser.formOf(page)
  form.body.set('code', code)
  return form
}

/** Posts `form` with another code typed in. */
export function typeCode(browser: Browser, form: { url: string; body: URLSearchParams }, code: string, headers?: Record<string, string>): Promise<Response> {
  const body = new URLSearchParams(form.body)
  body.set('code', code)
  return browser.request(form.url, { body, headers })
}

/** A code that is not `code`. */
export function otherCode(code: string, step = 1): string {
  return String((Number(code) + step) % 1_000_000).padStart(6, '0')
}

export { Browser }

/**
 * Shared steps of the e-mail sign-in tests: a migrated database, an app with a Nodemailer provider
 * pointed at the in-process SMTP server, and the browser's side of a sign-in (CSRF token, POST
 * /signin/<id>, the link from the captured e-mail).
 */
import type { Knex } from 'knex'
import type { PortcullisConfig, PortcullisResult } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Nodemailer, { type NodemailerUserConfig } from 'portcullis/providers/nodemailer'
import { Browser } from '../support/browser.js'
import { closeListeners, listen, mountApp, type Listener } from '../support/oauth-app.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { afterAll, beforeAll, beforeEach, expect } from '@jest/globals'
import { recordingLogger as sharedRecordingLogger, type RecordingLogger } from '../support/logger.js'

export const FROM = 'Portcullis tests <auth@example.test>'

/** Log lines, by level, each joined into one string. */
export interface LogLines {
  error: string[]
  warn: string[]
  debug: string[]
}

/** The shared recording logger (support/logger.ts), with its lines by level, each joined into one string. */
export function recordingLogger(): { logger: RecordingLogger; lines: LogLines } {
  const logger = sharedRecordingLogger()
  const joined = (level: keyof LogLines) =>
    logger.lines.filter((line) => line.level === level).map((line) => [line.code, ...line.message].map((part) => (typeof part === 'string' ? part : String(part))).join(' '))
  return { logger, lines: { get error() { return joined('error') }, get warn() { return joined('warn') }, get debug() { return joined('debug') } } }
}

/**
 * The suite's SMTP server and app listener, started before its tests and closed after them; each test
 * starts with no e-mail waiting (one that failed before taking its e-mail does not hand it on).
 */
export function useEmailRig(): { readonly smtp: TestSmtpServer; readonly app: Listener } {
  const rig = {} as { smtp: TestSmtpServer; app: Listener }
  beforeAll(async () => {
    rig.smtp = await startSmtpServer()
    rig.app = await listen()
  })
  afterAll(async () => {
    await closeListeners()
    await rig.smtp?.close()
  })
  beforeEach(() => rig.smtp.skipReceived())
  return rig
}

/** Portcullis on `listener` with a Nodemailer provider sending to `smtp` and the Knex adapter on `knex`. */
export function mountEmailApp(
  listener: Listener,
  knex: Knex,
  smtp: Pick<TestSmtpServer, 'url'> | { url: string },
  config: Partial<PortcullisConfig> = {},
  provider: NodemailerUserConfig = {},
): PortcullisResult {
  return mountApp(listener, { adapter: KnexAdapter(knex), providers: [Nodemailer({ server: smtp.url, from: FROM, ...provider })], ...config })
}

/** GET /csrf, then POST /signin/<id> with `email`; the response (302 to verify-request when it worked). */
export async function requestLink(
  browser: Browser,
  appUrl: string,
  email: string,
  options: { providerId?: string; callbackUrl?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const { csrfToken } = (await (await browser.request(`${appUrl}/api/auth/csrf`)).json()) as { csrfToken: string }
  const body = new URLSearchParams({ csrfToken, email, ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}) })
  return browser.request(`${appUrl}/api/auth/signin/${options.providerId ?? 'nodemailer'}`, { body, headers: options.headers })
}

/** Asks for a link to `address` in `browser` (which then holds its binding cookie); the link mailed. */
export async function mailedLink(rig: { readonly smtp: TestSmtpServer; readonly app: Listener }, browser: Browser, address: string): Promise<string> {
  expect((await requestLink(browser, rig.app.url, address)).status).toBe(302)
  return linkOf(await rig.smtp.nextMessage())
}

/**
 * Opens a sign-in link as its reader would: in the browser that asked for it, the link signs in at
 * once; in any other, the "Sign in as …?" page comes first, and its button is pressed.
 */
export async function followLink(browser: Browser, link: string): Promise<Response> {
  const response = await browser.request(link)
  return response.status === 200 ? browser.submitForm(response) : response
}

/** The link's `token` and `email` parameters. */
export function paramsOf(link: string): { token: string; email: string; callbackUrl: string | null } {
  const url = new URL(link)
  return { token: url.searchParams.get('token')!, email: url.searchParams.get('email')!, callbackUrl: url.searchParams.get('callbackUrl') }
}

/** `link` with its search parameters changed. */
export function withParams(link: string, changes: Record<string, string>): string {
  const url = new URL(link)
  for (const [key, value] of Object.entries(changes)) url.searchParams.set(key, value)
  return url.href
}

/** The names of the cookies a response sets (with a value, i.e. not clearing them). */
export function cookiesSet(response: Response): string[] {
  return response.headers
    .getSetCookie()
    .filter((cookie) => !/^[^=]+=;/.test(cookie))
    .map((cookie) => cookie.slice(0, cookie.indexOf('=')))
}

export { Browser }

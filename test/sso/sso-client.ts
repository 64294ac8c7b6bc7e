/**
 * How the SSO suites talk to the app as a browser's JSON client: a CSRF token for the browser's
 * cookie, and a JSON POST under `/api/auth` carrying it. `origin` is read on each call: the suites'
 * listeners exist only once their `beforeAll` has run.
 */
import type { Browser } from '../support/browser.js'

export interface SsoClient {
  /** A fresh CSRF token for `browser` (it keeps the cookie), from `at` (default: the app's origin). */
  csrf(browser: Browser, at?: string): Promise<string>
  /** POSTs JSON `fields` and the browser's CSRF token to `/api/auth<path>`. */
  post(browser: Browser, path: string, fields: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }>
}

export function ssoClient(origin: () => string): SsoClient {
  const csrf = async (browser: Browser, at = origin()) => ((await (await browser.request(`${at}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
  return {
    csrf,
    async post(browser, path, fields) {
      const response = await browser.request(`${origin()}/api/auth${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', origin: origin() },
        body: JSON.stringify({ csrfToken: await csrf(browser), ...fields }),
      })
      return { status: response.status, body: (await response.json()) as Record<string, any> }
    },
  }
}

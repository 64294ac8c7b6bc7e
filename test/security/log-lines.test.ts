/**
 * Attacker-sized log lines: what a client puts in a URL reaches the log as a short, escaped value.
 * `GET /callback/<id>?error=<50 KB>` once wrote a 50 KB warning, and a raw U+2028 or U+202E lets a
 * value pose as another line or show what follows reversed in a terminal or log viewer.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { PortcullisConfig } from 'portcullis'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, startSignIn, type Listener } from '../support/oauth-app.js'
import { recordingLogger } from '../email/email-app.js'
import { close, listen as listenRaw, rawRequest } from '../support/raw-http.js'
import { createServer } from 'node:http'
import Portcullis from 'portcullis'
import { SECRET, credentialsProvider } from '../support/flow.js'

const FORGED = '\u2028[portcullis][error] Forged line\u202Eeulav desrever\u2029\u0085\u200F'
const HUGE = `${FORGED}${'x'.repeat(50_000)}`
const RAW = /[\u2028\u2029\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u0000-\u001F\u007F-\u009F]/

let idp: TestIdp
let app: Listener
beforeAll(async () => {
  app = await listen()
  idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }] })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

/** Every line logged, at any level. */
function allLines(lines: ReturnType<typeof recordingLogger>['lines']): string[] {
  return [...lines.error, ...lines.warn, ...lines.debug]
}

describe('client-chosen values in log lines', () => {
  it('a 50 KB ?error= with line separators and bidi overrides on the OAuth callback: one short line, escaped', async () => {
    const { logger, lines } = recordingLogger()
    mountApp(app, { providers: [OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true })], logger, debug: true } as Partial<PortcullisConfig>)
    // A query string is bounded by Node's header limit (16 KB); a form_post body of the browser that
    // started the sign-in (it holds the check cookies) carries 50 KB.
    const browser = new Browser()
    await startSignIn(browser, app.url, 'corp')
    const viaQuery = await browser.request(`${app.url}/api/auth/callback/corp?${new URLSearchParams({ error: HUGE.slice(0, 10_000) })}`)
    expect(viaQuery.status).toBe(302)
    await startSignIn(browser, app.url, 'corp')
    const viaBody = await browser.request(`${app.url}/api/auth/callback/corp`, { body: new URLSearchParams({ error: HUGE, error_description: HUGE.slice(0, 10_000) }) })
    expect(viaBody.status).toBe(302)
    const logged = allLines(lines)
    expect(logged.length).toBeGreaterThan(0)
    for (const line of logged) {
      expect(line.length).toBeLessThan(1200)
      expect(line).not.toMatch(RAW)
    }
    expect(logged.join('\n')).toContain('\\u2028[portcullis][error] Forged line\\u202e')
  })

  it('an unknown provider id or route of any size is bounded and escaped too', async () => {
    const { logger, lines } = recordingLogger()
    const { handlers } = Portcullis({ secret: SECRET, providers: [credentialsProvider], trustHost: true, logger, debug: true })
    const server = await listenRaw(createServer((req, res) => void handlers(req, res)))
    try {
      const encoded = encodeURIComponent(`${'p'.repeat(5000)}${FORGED}`)
      for (const path of [`/api/auth/signin/${encoded}`, `/api/auth/${encoded}`, `/api/auth/callback/${encoded}`]) {
        await rawRequest(server, path, { method: path.includes('/signin/') ? 'POST' : 'GET', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })
      }
    } finally {
      await close(server)
    }
    const logged = allLines(lines)
    expect(logged.length).toBeGreaterThan(0)
    for (const line of logged) {
      expect(line.length).toBeLessThan(1200)
      expect(line).not.toMatch(RAW)
    }
  })
})

/**
 * Apps for OAuth flow tests: an Express app with Portcullis listening on a real port (the IdP
 * redirects the browser there), and the browser's side of a sign-in: CSRF token, POST
 * /signin/:provider, the IdP's login (see browser.ts), the callback.
 *
 * The port is known before the app is built, so the IdP can register the exact redirect URI.
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import type { PortcullisConfig, PortcullisResult, Session } from 'portcullis'
import { authApp } from './app-rig.js'
import type { Browser, Navigation } from './browser.js'
import { SECRET } from './flow.js'

export { SECRET }

/** A server listening before its app exists. */
export interface Listener {
  /** e.g. `http://127.0.0.1:43210` */
  readonly url: string
  /** The callback URL of provider `id` at this server. */
  callbackUrl(id: string): string
  /** Serves `app` from now on. */
  mount(app: RequestListener): void
  close(): Promise<void>
}

const servers = new Set<Server>()

/** Listens on an ephemeral port of `host`; the app is mounted later. `urlHost` names it in URLs (e.g. `localhost`). */
export async function listen(host = '127.0.0.1', urlHost = host): Promise<Listener> {
  let app: RequestListener = (_req, res) => res.writeHead(503).end()
  const server = createServer((req, res) => app(req, res))
  // No idle keep-alive connection is closed by the server: fetch reuses one just as the 5 s timeout
  // closes it and fails ("other side closed", ECONNRESET), which a loaded machine's event-loop lag made
  // happen to 2 of 50 concurrent link uses in test/email/flow.test.ts. closeServer closes them all.
  server.keepAliveTimeout = 0
  servers.add(server)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const url = `http://${urlHost}:${(server.address() as AddressInfo).port}`
  return {
    url,
    callbackUrl: (id) => `${url}/api/auth/callback/${id}`,
    mount: (next) => void (app = next),
    close: () => closeServer(server),
  }
}

function closeServer(server: Server): Promise<void> {
  servers.delete(server)
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** Closes every server `listen` opened that is still open. */
export async function closeListeners(): Promise<void> {
  await Promise.all([...servers].map(closeServer))
}

export const silentLogger = { error: () => {}, warn: () => {}, debug: () => {} }

/** Portcullis at /api/auth of `listener`, `/me` answering the session, `/` a plain page. */
export function mountApp(listener: Listener, config: Partial<PortcullisConfig>, createExpress: () => express.Express = express): PortcullisResult {
  const { app, ...portcullis } = authApp({ secret: SECRET, logger: silentLogger, providers: [], ...config }, createExpress)
  app.get('/', (_req, res) => void res.send('home'))
  listener.mount(app)
  return portcullis
}

/** GET /csrf, then POST /signin/:provider: the authorization URL the app redirects to. */
export async function startSignIn(browser: Browser, appUrl: string, providerId: string, options: { callbackUrl?: string; query?: string } = {}): Promise<string> {
  const { csrfToken } = (await (await browser.request(`${appUrl}/api/auth/csrf`)).json()) as { csrfToken: string }
  const body = new URLSearchParams({ csrfToken, ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}) })
  const response = await browser.request(`${appUrl}/api/auth/signin/${providerId}${options.query ? `?${options.query}` : ''}`, { body })
  if (response.status !== 302) throw new Error(`POST /signin/${providerId} answered ${response.status}: ${await response.text()}`)
  return response.headers.get('location')!
}

/** Delivers the IdP's answer to the app's callback; a form_post's 303 is followed to the GET callback. */
export async function finishSignIn(browser: Browser, navigation: Navigation): Promise<Response> {
  const response = await browser.navigate(navigation)
  if (response.status !== 303) return response
  return browser.request(new URL(response.headers.get('location')!, navigation.url).href)
}

/** A whole sign-in as `login`; resolves with the callback's response (302 to the callback URL when it worked). */
export async function signInWith(browser: Browser, appUrl: string, providerId: string, login = 'alice', options: { callbackUrl?: string; query?: string } = {}): Promise<Response> {
  const authorizationUrl = await startSignIn(browser, appUrl, providerId, options)
  return finishSignIn(browser, await browser.authorize(authorizationUrl, login))
}

/** The browser's session at the app (`auth(req, res)` on /me). */
export async function sessionOf(browser: Browser, appUrl: string): Promise<Session | null> {
  return (await (await browser.request(`${appUrl}/me`)).json()) as Session | null
}

/** Where a response redirects, with its `error` and `code` parameters. */
export function redirectOf(response: Response): { url: URL; error: string | null; code: string | null } {
  const location = response.headers.get('location')
  if (!location) throw new Error(`expected a redirect, got ${response.status}`)
  const url = new URL(location, response.url || 'http://invalid')
  return { url, error: url.searchParams.get('error'), code: url.searchParams.get('code') }
}

/**
 * Shared steps of the authorization server suites: an app on a migrated database with a credentials
 * provider (the password is "pw"), `authorizationServer` on with a public native client, a
 * confidential web client, a first-party client and a machine client, its API routes guarded by
 * `requireScopes()`; a browser that signs in to the site; openid-client as the relying party.
 */
import { createServer, type RequestListener } from 'node:http'
import type { Knex } from 'knex'
import * as oauth from 'openid-client'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, listenApp, type AuthApp } from '../support/app-rig.js'
import { Browser } from '../support/browser.js'
import { SECRET } from '../support/flow.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { csrfOf } from '../password/password-app.js'

export { Browser, oauth }

export const NATIVE_REDIRECT = 'http://127.0.0.1/callback'
export const WEB_REDIRECT = 'https://web.example.com/callback'
export const WEB_SECRET = 'web-client-secret-that-is-32-characters-long'
export const MACHINE_SECRET = 'machine-client-secret-32-characters-or-more'

/** The app, its origin and issuer, its adapter and logger. */
export interface ServerApp extends AuthApp {
  origin: string
  issuer: string
  logger: RecordingLogger
  adapter: ReturnType<typeof KnexAdapter>
}

/** Portcullis with the authorization server on `knex`, listening on 127.0.0.1 (AUTH_URL is its address). */
export async function startServerApp(knex: Knex, config: Partial<PortcullisConfig> = {}): Promise<ServerApp> {
  let handler: RequestListener = (_req, res) => void res.writeHead(503).end()
  const { origin } = await listenApp((req, res) => handler(req, res))
  const adapter = KnexAdapter(knex)
  const logger = recordingLogger()
  // The issuer is fixed by AUTH_URL, read once at init.
  const previous = process.env['AUTH_URL']
  process.env['AUTH_URL'] = `${origin}/api/auth`
  const app = authApp({
    secret: SECRET,
    adapter,
    logger,
    debug: true,
    providers: [Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
    authorizationServer: {
      scopes: ['reports:read', 'reports:write'],
      clients: [
        { client_id: 'cli', client_name: 'Acme CLI', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: [NATIVE_REDIRECT, 'com.example.app:/callback'], grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] },
        { client_id: 'web', client_name: 'Partner Web', client_secret: WEB_SECRET, redirect_uris: [WEB_REDIRECT], post_logout_redirect_uris: ['https://web.example.com/'] },
        { client_id: 'first', client_name: 'Acme Dashboard', client_secret: WEB_SECRET, redirect_uris: ['https://dashboard.example.com/callback'], first_party: true },
        { client_id: 'machine', client_secret: MACHINE_SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      ],
    },
    ...config,
  })
  if (previous === undefined) delete process.env['AUTH_URL']
  else process.env['AUTH_URL'] = previous
  app.app.get('/api/reports', app.requireScopes('reports:read'), (req, res) => void res.json({ auth: (req as { auth?: unknown }).auth }))
  app.app.post('/api/reports', app.requireScopes('reports:write'), (_req, res) => void res.status(201).json({ ok: true }))
  handler = app.app
  return { ...app, origin, issuer: `${origin}/api/auth/oauth`, logger, adapter }
}

/** A browser signed in to the site as `email` (created when missing) through the credentials form. */
export async function signedInBrowser(app: ServerApp, email: string): Promise<Browser> {
  if (!(await app.adapter.getUserByEmail(email))) await app.adapter.createUser({ email, emailVerified: new Date(), name: email.split('@')[0]!, image: null })
  const browser = new Browser()
  const signIn = await browser.request(`${app.origin}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin), email, password: 'pw' }) })
  if (signIn.status !== 302) throw new Error(`signing in answered ${signIn.status}`)
  return browser
}

/** openid-client's configuration for one of the app's clients (over http: the test server's). */
export async function relyingParty(app: ServerApp, clientId: string, secret?: string): Promise<oauth.Configuration> {
  const auth = secret === undefined ? oauth.None() : oauth.ClientSecretBasic(secret)
  return oauth.discovery(new URL(app.issuer), clientId, undefined, auth, { execute: [oauth.allowInsecureRequests] })
}

/**
 * Runs an authorization request in `browser` up to the redirect back to the client: follows the
 * server's redirects (sign-in, consent), pressing Allow on the consent page when `consent` says so.
 * @returns The URL the browser was sent back to (the client's redirect URI with `code` or `error`).
 */
export async function authorize(browser: Browser, url: URL | string, { consent = 'allow' }: { consent?: 'allow' | 'deny' | 'none' } = {}): Promise<URL> {
  let response = await browser.follow(await browser.request(String(url)))
  for (let step = 0; step < 5; step++) {
    const location = response.headers.get('location')
    if (location && response.status >= 300 && response.status < 400) return new URL(location, response.url)
    if (response.status !== 200 || consent === 'none') throw new Error(`authorization stopped at ${response.url} (${response.status}): ${(await response.text()).slice(0, 300)}`)
    const form = await browser.formOf(response)
    form.body.set('decision', consent)
    response = await browser.follow(await browser.navigate(form), new URL(response.url).origin)
  }
  throw new Error('authorization did not end')
}

/** A PKCE verifier and its S256 challenge. */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oauth.randomPKCECodeVerifier()
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) }
}

/** A plain node:http listener on 127.0.0.1 (a native app's loopback redirect target). */
export { createServer }

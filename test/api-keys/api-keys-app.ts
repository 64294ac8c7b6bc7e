/**
 * Shared steps of the API keys suites: an app with a credentials provider on a migrated database
 * (users created directly; the password is "pw"), `apiKeys` on, `GET /me` answering `auth()`, and
 * routes guarded by `requireScopes()`; a browser that signs in and manages keys through the routes;
 * a counting wrapper of the adapter, to prove which refusals never reach the database.
 */
import type { Knex } from 'knex'
import type { Adapter, PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, listenApp, type AuthApp } from '../support/app-rig.js'
import { Browser } from '../support/browser.js'
import { SECRET } from '../support/flow.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { csrfOf } from '../password/password-app.js'

export { Browser }

/** The app, its URL, its logger and how often each adapter method was called. */
export interface KeysApp extends AuthApp {
  url: string
  logger: RecordingLogger
  calls: Map<string, number>
  /** The hashes `getApiKeyByHash` was asked for, in order. */
  lookups: string[]
  adapter: ReturnType<typeof KnexAdapter>
}

/** Counts the calls of every adapter method (by name) in `calls`. */
function counted<T extends object>(adapter: T, calls: Map<string, number>, lookups: string[]): T {
  return new Proxy(adapter, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown
      if (typeof value !== 'function' || typeof name !== 'string') return value
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1)
        if (name === 'getApiKeyByHash') lookups.push(String(args[0]))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}

/** Portcullis with `apiKeys` on `knex`, listening on 127.0.0.1. */
export async function startKeysApp(knex: Knex, config: Partial<PortcullisConfig> = {}): Promise<KeysApp> {
  const calls = new Map<string, number>()
  const lookups: string[] = []
  const adapter = KnexAdapter(knex)
  const logger = recordingLogger()
  const app = authApp({
    secret: SECRET,
    adapter: counted(adapter, calls, lookups) as Adapter,
    logger,
    debug: true,
    providers: [Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
    apiKeys: { scopes: ['reports:read', 'reports:write', 'deploy'] },
    ...config,
  })
  app.app.get('/reports', app.requireScopes('reports:read'), (req, res) => void res.json({ auth: (req as { auth?: unknown }).auth }))
  app.app.post('/reports', app.requireScopes('reports:write'), (_req, res) => void res.status(201).json({ ok: true }))
  app.app.get('/signed-in', app.requireScopes(), (_req, res) => void res.json({ ok: true }))
  const { origin } = await listenApp(app.app)
  return { ...app, url: origin, logger, calls, lookups, adapter }
}

/** A browser signed in as `email` (created when missing) through the credentials form. */
export async function signedInBrowser(app: KeysApp, email: string): Promise<Browser> {
  if (!(await app.adapter.getUserByEmail(email))) await app.adapter.createUser({ email, emailVerified: null, name: email.split('@')[0]!, image: null })
  const browser = new Browser()
  const signIn = await browser.request(`${app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.url), email, password: 'pw' }) })
  if (signIn.status !== 302) throw new Error(`signing in answered ${signIn.status}`)
  return browser
}

/** POSTs JSON `fields` (with the CSRF token) to `/api/auth/<path>` as a JSON client. */
export async function postJson(browser: Browser, app: KeysApp, path: string, fields: Record<string, unknown>): Promise<Response> {
  return browser.request(`${app.url}/api/auth/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', origin: app.url },
    body: JSON.stringify({ csrfToken: await csrfOf(browser, app.url), ...fields }),
  })
}

/** A key made through the JSON route. */
export async function createKey(browser: Browser, app: KeysApp, fields: Record<string, unknown> = {}): Promise<{ key: string; id: string; display: string }> {
  const response = await postJson(browser, app, 'api-keys', { name: 'CI', scopes: ['reports:read'], ...fields })
  if (response.status !== 201) throw new Error(`creating a key answered ${response.status}: ${await response.text()}`)
  return (await response.json()) as { key: string; id: string; display: string }
}

/** `fetch` with no cookies, sending `key` as a bearer token (or in `header`). */
export function withKey(url: string, key: string, init: { method?: string; header?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = init.header ? { [init.header]: key } : { authorization: `Bearer ${key}` }
  return fetch(url, { method: init.method ?? 'GET', headers })
}

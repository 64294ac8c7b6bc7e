/**
 * Shared steps of the organizations' route suites: Portcullis with `organizations` on a migrated
 * database (users created directly, signing in with the Credentials provider: the password is "pw"),
 * listening on 127.0.0.1; a signed-in user who talks to the routes as a JSON client or as a browser's
 * form; and the emptying of the organizations' tables between tests (the shared support empties the
 * core's only).
 */
import { afterEach } from '@jest/globals'
import type { Knex } from 'knex'
import type { PortcullisConfig, Session } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp, listenApp, type AuthApp } from '../support/app-rig.js'
import { Browser } from '../support/browser.js'
import { SECRET } from '../support/flow.js'

/** The session strategies the suites run on. */
export type Strategy = 'database' | 'jwt' | 'jwt+store'

/** The app, where it listens, and its adapter. */
export interface OrganizationsApp extends AuthApp {
  url: string
  server: import('node:http').Server
  adapter: ReturnType<typeof KnexAdapter>
  events: { name: string; message: unknown }[]
}

/** Portcullis with `organizations` on `knex`, listening. */
export async function startOrganizationsApp(knex: Knex, strategy: Strategy = 'database', config: Partial<PortcullisConfig> = {}): Promise<OrganizationsApp> {
  const adapter = KnexAdapter(knex)
  const events: { name: string; message: unknown }[] = []
  const record = (name: string) => (message: unknown) => void events.push({ name, message })
  const app = authApp({
    secret: SECRET,
    adapter,
    organizations: true,
    session: strategy === 'database' ? { strategy: 'database' } : strategy === 'jwt+store' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'jwt' },
    providers: [Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
    events: { memberRoleChanged: record('memberRoleChanged'), memberRemoved: record('memberRemoved'), organizationDeleted: record('organizationDeleted'), activeOrganizationChanged: record('activeOrganizationChanged') },
    ...config,
  })
  const { server, origin } = await listenApp(app.app)
  return { ...app, url: origin, server, adapter, events }
}

/** Empties the organizations' tables after each test (children first: SQLite enforces no cascade here). */
export function emptyOrganizationsAfterEach(db: { readonly knex: Knex }): void {
  afterEach(async () => {
    for (const table of ['TeamMember', 'Team', 'Invitation', 'Member', 'Organization']) await db.knex(table).del()
  })
}

/** A signed-in user: their browser (cookie jar) and the ways they talk to the routes. */
export class Member {
  constructor(
    readonly app: OrganizationsApp,
    readonly browser: Browser,
    readonly userId: string,
    readonly email: string,
  ) {}

  /** A fresh CSRF token (the browser keeps its cookie). */
  async csrf(): Promise<string> {
    return ((await (await this.browser.request(`${this.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
  }

  /** POSTs JSON `fields` with the CSRF token (unless `csrfToken` is given in them) to `/api/auth<path>`. */
  async post(path: string, fields: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; response: Response }> {
    const response = await this.browser.request(`${this.app.url}/api/auth${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: this.app.url, ...headers },
      body: JSON.stringify({ csrfToken: await this.csrf(), ...fields }),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, response }
  }

  /** POSTs a browser's form (`fields`, with the CSRF token unless given) to `/api/auth<path>`. */
  async form(path: string, fields: Record<string, string> = {}): Promise<Response> {
    return this.browser.request(`${this.app.url}/api/auth${path}`, {
      method: 'POST',
      headers: { origin: this.app.url, accept: 'text/html' },
      body: new URLSearchParams({ csrfToken: await this.csrf(), ...fields }),
    })
  }

  /** GETs `/api/auth<path>` as a JSON client. */
  async get(path: string): Promise<{ status: number; body: Record<string, unknown>; response: Response }> {
    const response = await this.browser.request(`${this.app.url}/api/auth${path}`, { headers: { accept: 'application/json' } })
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, response }
  }

  /** GETs `/api/auth<path>` as a browser: the page. */
  async page(path: string): Promise<{ status: number; html: string; response: Response }> {
    const response = await this.browser.request(`${this.app.url}/api/auth${path}`, { headers: { accept: 'text/html' } })
    return { status: response.status, html: await response.text(), response }
  }

  /** The session as `auth()` reads it. */
  async session(): Promise<Session | null> {
    return (await (await this.browser.request(`${this.app.url}/me`)).json()) as Session | null
  }

  /** The Cookie header this browser sends (session and CSRF cookies), for raw requests. */
  cookieHeader(): string {
    return ['authjs.session-token', 'authjs.csrf-token'].flatMap((name) => (this.browser.cookie(this.app.url, name) ? [`${name}=${this.browser.cookie(this.app.url, name)}`] : [])).join('; ')
  }

  /** Creates an organization through the route; its id. */
  async create(name: string, slug?: string): Promise<string> {
    const { status, body } = await this.post('/organizations', { name, ...(slug ? { slug } : {}) })
    if (status !== 201) throw new Error(`creating ${name} answered ${status}: ${JSON.stringify(body)}`)
    return (body.organization as { id: string }).id
  }
}

/** A browser signed in as `email` (the user created when missing) through the credentials form. */
export async function signIn(app: OrganizationsApp, email: string, name = email.split('@')[0]!): Promise<Member> {
  const user = (await app.adapter.getUserByEmail(email)) ?? (await app.adapter.createUser({ email, emailVerified: null, name, image: null }))
  const browser = new Browser()
  const member = new Member(app, browser, user.id, email)
  const response = await browser.request(`${app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await member.csrf(), email, password: 'pw' }) })
  if (response.status !== 302) throw new Error(`signing in answered ${response.status}`)
  return member
}

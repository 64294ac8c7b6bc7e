/**
 * The authorization server example: `npx tsx examples/authorization-server/server.ts` (see README.md).
 * An Express app whose users sign in with a username and password (Portcullis on embedded SQLite,
 * migrated at start), and which is the OAuth 2.1 authorization server and OpenID Provider of the
 * company's other callers, one client each, every one with its program beside this file:
 *
 * - `acme-cli` (cli-device.ts): a CLI or a TV app, the device flow;
 * - `acme-desktop` (native-app.ts): a desktop or phone app, the system browser, PKCE and a loopback redirect;
 * - `report-job` (service.ts): a service acting for itself, client credentials;
 * - `second-app` (second-app.ts): the company's second web site, which signs its users in with this one.
 *
 * Each gets tokens for `/api/reports`, guarded by `requireScopes('reports:read')`.
 *
 * Environment: PORT (default 3000), HOST (default localhost), SECOND_APP_PORT (default 3001: where
 * second-app.ts runs, for its redirect URI), DATABASE_FILE (default examples/authorization-server/example.sqlite),
 * AUTH_SECRET (without it Portcullis keeps a development secret in .portcullis/dev-secret), REPORT_JOB_SECRET
 * and SECOND_APP_CLIENT_SECRET (the confidential clients' secrets; development defaults below).
 *
 * Demo users: `ada` / `lovelace` and `grace` / `hopper`.
 */
import { fileURLToPath } from 'node:url'
import express from 'express'
import knex from 'knex'
import Portcullis, { type BearerAuth, type Session } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { demoUsers as users, verifyDemoUser as verifyUser } from '../demo-users.js'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? 'localhost'
const secondAppPort = Number(process.env.SECOND_APP_PORT ?? 3001)
const databaseFile = process.env.DATABASE_FILE ?? fileURLToPath(new URL('example.sqlite', import.meta.url))
// Every token names the issuer, so it is fixed by AUTH_URL, never taken from a request's Host: here
// http://localhost:<PORT>/api/auth, so the issuer is http://localhost:<PORT>/api/auth/oauth. In production
// AUTH_URL comes from the environment: https://app.example.com/api/auth.
process.env.AUTH_URL = `http://localhost:${port}/api/auth`

// The confidential clients' secrets (32 characters or more). These defaults are for this example on one
// machine only: in production each comes from the environment, and the client keeps its copy as secret.
const REPORT_JOB_SECRET = process.env.REPORT_JOB_SECRET ?? 'report-job-development-secret-not-for-production'
const SECOND_APP_CLIENT_SECRET = process.env.SECOND_APP_CLIENT_SECRET ?? 'second-app-development-secret-not-for-production'

const db = knex({ client: 'better-sqlite3', connection: { filename: databaseFile }, useNullAsDefault: true })
// Portcullis's tables, the authorization server's records (its sixteenth migration) among them.
await db.migrate.latest({ migrationSource: migrationSource() })
const adapter = KnexAdapter(db)
for (const user of users) if (!(await adapter.getUserByEmail(user.email))) await adapter.createUser({ name: user.name, email: user.email, emailVerified: new Date() })

const { handlers, auth, requireScopes } = Portcullis({
  adapter,
  providers: [
    Credentials({
      name: 'username and password',
      credentials: {
        username: { label: 'Username', type: 'text', placeholder: 'ada', required: true },
        password: { label: 'Password', type: 'password', required: true },
      },
      authorize: async ({ username, password }) => {
        if (typeof username !== 'string' || typeof password !== 'string') return null
        const user = await verifyUser(username, password)
        // Database sessions point at a users row: the stored user, not a made-up one.
        return user ? adapter.getUserByEmail(user.email) : null
      },
    }),
  ],
  authorizationServer: {
    scopes: ['reports:read'],
    clients: [
      // A CLI or a TV app cannot keep a secret (anyone can read its binary): a public client. It shows a code,
      // the user enters it on /api/auth/oauth/device in any browser; no redirect at all.
      {
        client_id: 'acme-cli',
        client_name: 'Acme CLI',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
      },
      // A desktop or phone app, public too: the system browser, PKCE, and a loopback redirect, which for a
      // native client matches any port (RFC 8252 §7.3). A phone app would register its claimed https URL or
      // its reverse-domain scheme (com.example.acme:/callback) here instead.
      {
        client_id: 'acme-desktop',
        client_name: 'Acme Desktop',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
      },
      // A service acting for itself (no user): client credentials, with a secret, and only the scope it needs.
      {
        client_id: 'report-job',
        client_name: 'Nightly report job',
        client_secret: REPORT_JOB_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'reports:read',
      },
      // The company's second web site: a confidential OpenID Connect client (its server keeps the secret).
      // first_party: it is the company's own, so its users are not asked to allow it.
      {
        client_id: 'second-app',
        client_name: 'Acme Second App',
        client_secret: SECOND_APP_CLIENT_SECRET,
        redirect_uris: [`http://127.0.0.1:${secondAppPort}/api/auth/callback/acme`],
        post_logout_redirect_uris: [`http://127.0.0.1:${secondAppPort}/`],
        first_party: true,
      },
    ],
  },
})

const app = express()
// Sign-in, sign-out, the consent page, the apps page (/api/auth/oauth-apps) and the authorization server (/api/auth/oauth/*).
app.use('/api/auth', handlers)

app.get('/', async (req, res) => {
  const session = await auth(req, res)
  res.type('html').send(
    session
      ? `<p>Signed in as ${escapeHtml(session.user.name)} (${escapeHtml(session.user.email)}). <a href="/api/auth/oauth-apps">Apps with access to your account</a> · <a href="/api/auth/signout">Sign out</a></p>`
      : `<p>Not signed in. <a href="/api/auth/signin?callbackUrl=%2F">Sign in</a> as <code>ada</code> / <code>lovelace</code> or <code>grace</code> / <code>hopper</code>.</p>`,
  )
})

// The API the callers call. A signed-in browser passes (a cookie session has no scopes); an access token of
// this server passes when it carries reports:read. Its req.auth says who: `type: 'bearer'`, the client, and
// the user it acts for (null for a service's own token).
app.get('/api/reports', requireScopes('reports:read'), (req, res) => {
  const caller = req.auth as Session | BearerAuth
  const bearer = caller.type === 'bearer' ? (caller as BearerAuth) : undefined
  res.json({ reports: [{ id: 1, title: 'Monthly sign-ins' }], user: caller.user?.email ?? null, client: bearer?.client.id ?? null, scopes: bearer?.scopes ?? null })
})

function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

app.listen(port, host, () => {
  console.log(`Authorization server example running at http://localhost:${port} (issuer ${process.env.AUTH_URL}/oauth; database: ${databaseFile})`)
})

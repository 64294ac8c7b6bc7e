/**
 * The Portcullis Express example: credentials, password accounts (sign-up, verification, reset) and
 * e-mail sign-in with database sessions in an
 * embedded SQLite file, a public home page, a protected page and a JSON endpoint, and, when given
 * one, sign-in with an OpenID Connect provider (server.ts passes the local dev identity provider of
 * dev-idp.ts). E-mail sign-in needs no mail server: by default the link is printed to the console
 * (development only); with AUTH_EMAIL_SERVER (an SMTP URL) it is mailed. Given the site's origin (or
 * AUTH_URL), passkeys too: added on /api/auth/passkeys once signed in, then offered on the sign-in page.
 * Organizations: a demo one that ada owns and grace is a plain member of, `/organization` (the
 * session's active organization, creating one), and `/projects/new`, which only a role in the active
 * organization that grants `project: ['create']` opens. Given a SAML identity provider (server.ts
 * passes the local one of dev-saml-idp.ts), single sign-on: the demo organization's connection to it,
 * for the addresses of its domain, which the sign-in page sends there.
 * `createApp()` builds the app without listening, so the tests drive it directly
 * (test/examples/express.test.ts) and server.ts only adds `listen`.
 *
 * Demo users: `ada` / `lovelace`, an administrator (the admin API and pages, impersonation) and the
 * owner of the demo organization, and `grace` / `hopper`, a user and a member of it. With the dev
 * identity provider: any name, any password.
 */
import { randomBytes, scrypt, timingSafeEqual, type BinaryLike } from 'node:crypto'
import express, { type Express } from 'express'
import knex, { type Knex } from 'knex'
import Portcullis, { adminStatements, defineAccess, MissingCSRFError, OrganizationError, type LoggerInstance } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import Nodemailer from 'portcullis/providers/nodemailer'
import OIDC from 'portcullis/providers/oidc'
import Passkey from 'portcullis/providers/passkey'
import Password from 'portcullis/providers/password'
import SSO from 'portcullis/providers/sso'

/**
 * A demo account. The users table (Portcullis's) holds the profile; the password is the app's
 * business and stays here, kept only as a salted scrypt hash.
 */
interface DemoUser {
  username: string
  name: string
  email: string
  /** Its roles (`admin` may use the admin API and pages); none: the default `user`. */
  roles?: ('admin' | 'user')[]
  /** base64url scrypt salt and 64-byte derived key. */
  password: { salt: string; hash: string }
}

// Derived with: crypto.scryptSync('lovelace', salt, 64) (scrypt defaults N=16384, r=8, p=1).
const users: readonly DemoUser[] = [
  {
    username: 'ada',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    roles: ['admin'],
    password: {
      salt: 'J9_23oYHWgeHXNd2Sa2kMg',
      hash: 'xgaGwbvrbxvj2PNk8lBVPcdbuj6aTK_lnXD6gdWQCszRwjeZPe_cXACjdNVOUs0z-oywKPcLIFZVon2dS8zymA',
    },
  },
  {
    username: 'grace',
    name: 'Grace Hopper',
    email: 'grace@example.com',
    // crypto.scryptSync('hopper', salt, 64).
    password: {
      salt: 'rcRcRhQl65fIOz0mbWEXKA',
      hash: 'qN58B8dBdoFBIbYUCIkGtjbpCJKbVxVypwGhMgJUFD0g4qdWjCOlubJLqorplyfz3lI2sb-_z3_pU-2v5JCQIQ',
    },
  },
]

// Who may do what across the site: the admin API's actions. `admin` has them all; `user`, the default
// role, none. `project` is an organization's resource (organizations.statements below): only a role in
// the active organization grants it, and the checks' types take both sets of statements.
const access = defineAccess({ statements: { ...adminStatements } })

// The demo organization, seeded with its two members at start.
const DEMO_ORGANIZATION = { name: 'Analytical Engines', slug: 'analytical-engines' }

// Checked against when the username is unknown, so the response time does not tell whether it exists.
const DUMMY_PASSWORD = users[0]!.password

function scryptKey(password: BinaryLike, salt: BinaryLike): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, 64, (error, key) => (error ? reject(error) : resolve(key))))
}

/** The user whose password matches, or null. Constant-time comparison of the derived keys. */
async function verifyUser(username: string, password: string): Promise<DemoUser | null> {
  const user = users.find((candidate) => candidate.username === username)
  const stored = user?.password ?? DUMMY_PASSWORD
  const expected = Buffer.from(stored.hash, 'base64url')
  const actual = await scryptKey(password, Buffer.from(stored.salt, 'base64url'))
  return user && timingSafeEqual(actual, expected) ? user : null
}

/** Escapes a value for HTML text and quoted attributes. */
function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

const BRAND_COLOR = '#0f766e'

/** A minimal page around `body` (which must already be escaped). */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
a{color:${BRAND_COLOR}}
code{background:#f1f5f9;padding:.1rem .3rem;border-radius:.25rem}
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`
}

/** Options of `createApp`. */
export interface ExampleOptions {
  /** The SQLite file (created when missing), or `:memory:`. */
  databaseFile: string
  /**
   * An OpenID Connect issuer to offer on the sign-in page as "Local dev identity provider" (id
   * `dev-idp`, callback `<origin>/api/auth/callback/dev-idp`): the dev IdP of dev-idp.ts.
   */
  devIdp?: { issuer: string; clientId: string; clientSecret: string } | undefined
  /**
   * Where e-mail sign-in links go: an SMTP URL (`smtp://user:pass@host:587`) or `'console'`, which
   * prints them (development only). Default: AUTH_EMAIL_SERVER, else `'console'`.
   */
  emailServer?: string
  /** Portcullis's logger (the tests pass one that records). Default: the console. */
  logger?: LoggerInstance | undefined
  /**
   * The site's origin (`http://localhost:3000`), to offer passkeys: they are bound to it. With
   * AUTH_URL set, passkeys are offered on its origin. Neither: no passkeys.
   */
  passkeyOrigin?: string | undefined
  /**
   * A SAML identity provider to register as the demo organization's single sign-on connection, for
   * the addresses of `domain` (marked verified: no DNS here): the dev SAML IdP of dev-saml-idp.ts.
   */
  devSamlIdp?: { entityId: string; ssoUrl: string; certificate: string; domain: string } | undefined
}

/**
 * Builds the example app: Portcullis on `/api/auth` with database sessions, a home page,
 * `/dashboard`, `/api/me`, `/api/reports` (for API keys), `/organization` and `/projects/new`. Runs
 * the migrations and creates the demo users' rows and the demo organization first.
 */
export async function createApp({ databaseFile, devIdp, devSamlIdp, emailServer, logger, passkeyOrigin }: ExampleOptions): Promise<{ app: Express; db: Knex }> {
  const db = knex({ client: 'better-sqlite3', connection: { filename: databaseFile }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
  const adapter = KnexAdapter(db)
  const demoUsers: { id: string; roles: DemoUser['roles'] }[] = []
  for (const user of users) {
    const stored = (await adapter.getUserByEmail(user.email)) ?? (await adapter.createUser({ name: user.name, email: user.email }))
    demoUsers.push({ id: stored.id, roles: user.roles })
  }

  // No `secret` here: AUTH_SECRET from the environment, or in development the secret Portcullis
  // keeps in .portcullis/dev-secret (it warns, naming the file), so the two-step verification keys
  // sealed with it open after a restart. Production without AUTH_SECRET throws MissingSecretError.
  // With an adapter, sessions are database sessions: the cookie holds only a random session token.
  // An OIDC sign-in creates the user (and links the account) on first sign-in.
  const passkeys = passkeyOrigin !== undefined || process.env.AUTH_URL !== undefined
  const { handlers, auth, requireScopes, setRoles, getCsrfToken, requirePermission, addMember, listOrganizations, createOrganization, setActiveOrganization, getActiveOrganization, markSsoDomainVerified } = Portcullis({
    adapter,
    logger,
    providers: [
      // Single sign-on per organization: the sign-in page asks for the work address first. Domains are
      // proven by DNS in production; this example marks its demo domain verified itself ('dns-or-admin'),
      // and its dev IdP is on http://localhost (dangerouslyAllowInternalUrls: never for real IdPs).
      ...(devSamlIdp ? [SSO({ domainVerification: 'dns-or-admin', dangerouslyAllowInternalUrls: true })] : []),
      ...(devIdp
        ? [
            OIDC({
              id: 'dev-idp',
              name: 'Local dev identity provider',
              issuer: devIdp.issuer,
              clientId: devIdp.clientId,
              clientSecret: devIdp.clientSecret,
              // The dev IdP runs on http://localhost. Never set this for a real provider.
              dangerouslyAllowInsecureRequests: true,
            }),
          ]
        : []),
      // E-mail links. The sender is AUTH_EMAIL_FROM when set. Links must point at this site: in
      // production set AUTH_URL (Portcullis refuses to start without it, or trustHost).
      Nodemailer({
        server: emailServer ?? process.env.AUTH_EMAIL_SERVER ?? 'console',
        from: process.env.AUTH_EMAIL_FROM ?? 'Portcullis example <no-reply@localhost>',
      }),
      // Accounts with e-mail and password: sign-up, verification, reset (/api/auth/signup,
      // /api/auth/forgot-password), and an optional username to sign in with (/api/auth/username).
      // Their mails go where the Nodemailer provider's go: the console here.
      Password({ usernames: true }),
      Credentials({
        name: 'username and password',
        credentials: {
          username: { label: 'Username', type: 'text', placeholder: 'ada', required: true },
          password: { label: 'Password', type: 'password', required: true },
        },
        authorize: async ({ username, password }) => {
          if (typeof username !== 'string' || typeof password !== 'string') return null
          const user = await verifyUser(username, password)
          // Database sessions point at a users row: return the stored user, not a made-up one.
          return user ? adapter.getUserByEmail(user.email) : null
        },
      }),
      // Passkeys (needs @simplewebauthn/server): a signed-in user adds one on /api/auth/passkeys.
      ...(passkeys ? [Passkey({ relayingParty: { name: 'Portcullis example', origin: passkeyOrigin } })] : []),
    ],
    // Two-step verification for users who turn it on (/api/auth/two-factor/setup): a code from an
    // authenticator app after the password, and after an e-mail link.
    twoFactor: { issuer: 'Portcullis example' },
    // API keys for scripts (/api/auth/api-keys): `curl -H "Authorization: Bearer pc_live_…" localhost:3000/api/reports`.
    apiKeys: { scopes: ['reports:read'] },
    // The account page (/api/auth/account): profile, linked accounts, deleting the account after a
    // fresh sign-in; its mail goes where the e-mail provider's does.
    account: true,
    // Roles carried in the session (`req.auth.user.roles`), and the admin API on top: ada is an
    // administrator (set below), who can find, ban, help and impersonate users.
    roles: access,
    admin: true,
    // Organizations (/api/auth/organizations): users belong to several, with roles in each. The
    // built-in roles there: `owner` (everything), `admin` (everything but deleting it) and `member`
    // (none of these actions); `project` is this app's own resource beside the built-in ones.
    organizations: { statements: { project: ['create'] } },
    callbacks: {
      // Runs wherever `auth` is mounted as middleware: here only on /dashboard.
      authorized: ({ auth }) => !!auth,
    },
    theme: { brandColor: BRAND_COLOR },
  })

  // The first administrator comes from the app's own code (here: the demo user ada).
  for (const user of demoUsers) if (user.roles) await setRoles(user.id, user.roles)

  // The demo organization: ada its owner, grace a plain member. createOrganization(req, …) makes the
  // signed-in user the owner of a new one; seeding has no request, so it goes to the adapter here.
  const [ada, grace] = demoUsers as [(typeof demoUsers)[number], (typeof demoUsers)[number]]
  const demoOrganization =
    (await adapter.getOrganization({ slug: DEMO_ORGANIZATION.slug })) ??
    (await adapter.createOrganization({ ...DEMO_ORGANIZATION, logo: null, metadata: null }, { userId: ada.id, roles: ['owner'] }))?.organization
  if (!demoOrganization) throw new Error(`The slug ${DEMO_ORGANIZATION.slug} was taken while seeding.`)
  await addMember(demoOrganization.id, grace.id, ['member']) // null when she is one already
  if (devSamlIdp) await seedSamlConnection(adapter, demoOrganization.id, devSamlIdp, markSsoDomainVerified)

  const app = express()

  // Sign-in page, form posts, CSRF, session, sign-out: /api/auth/*. No body parser needed.
  app.use('/api/auth', handlers)

  // Public: shows who is signed in, if anyone.
  app.get('/', async (req, res) => {
    const session = await auth(req, res)
    const body = session
      ? `<p>Signed in as <strong>${escapeHtml(session.user.name)}</strong> (${escapeHtml(session.user.email)}).</p>
<p><a href="/dashboard">Dashboard</a> · <a href="/api/me">/api/me</a> · <a href="/api/auth/account">Your account</a> · <a href="/api/auth/sessions">Your sessions</a> · <a href="/api/auth/signout?callbackUrl=%2F">Sign out</a></p>`
      : `<p>You are not signed in.</p>
<p><a href="/api/auth/signin?callbackUrl=%2Fdashboard">Sign in</a> with username <code>ada</code> and password <code>lovelace</code>${
          devIdp ? ', or with the local dev identity provider (any name, any password)' : ''
        }.</p>
${
          devSamlIdp ? `<p>Or sign in with single sign-on as anyone <code>@${escapeHtml(devSamlIdp.domain)}</code>: the sign-in page sends that address to the local SAML identity provider, and the first sign-in makes you a member of the demo organization.</p>\n` : ''
        }<p>Or sign in with any e-mail address: the link is printed on the server's console (set <code>AUTH_EMAIL_SERVER</code> to an SMTP URL to mail it).</p>
<p>Or <a href="/api/auth/signup?callbackUrl=%2Fdashboard">create an account</a> with an e-mail address and a password: the link that confirms it is printed on the console too, and so is the one of <a href="/api/auth/forgot-password">a forgotten password</a>.</p>
<p>The <a href="/dashboard">dashboard</a> needs a session; <a href="/api/me">/api/me</a> answers 401 without one.</p>`
    res.type('html').send(page('Portcullis example', body))
  })

  // Protected: the middleware runs callbacks.authorized; signed-out visitors go to the sign-in page.
  app.use('/dashboard', auth)
  app.get('/dashboard', (req, res) => {
    const user = req.auth?.user
    // During an impersonation the session says who is acting: the app's own pages can say it too.
    const impersonated = req.auth?.impersonatedBy
      ? `<p><strong>An administrator is signed in as this user.</strong> <a href="/api/auth/admin/impersonation">Stop impersonating</a></p>\n`
      : ''
    res.type('html').send(
      page(
        'Dashboard',
        `${impersonated}<p>Welcome, ${escapeHtml(user?.name ?? user?.email)}. Your user id is <code>${escapeHtml(user?.id)}</code>.</p>
<p>E-mail: ${escapeHtml(user?.email ?? 'none')}</p>
<p><a href="/">Home</a> · <a href="/api/auth/account">Your account</a> · <a href="/api/auth/sessions">Your sessions</a> (every device signed in, and signing them out) · <a href="/api/auth/two-factor/setup?callbackUrl=%2Fdashboard">Two-step verification</a>${
          passkeys ? ' · <a href="/api/auth/passkeys">Your passkeys</a>' : ''
        } · <a href="/api/auth/api-keys">Your API keys</a> · <a href="/organization">Your organization</a>${
          user?.roles?.includes('admin') ? ' · <a href="/api/auth/admin">Users (admin)</a>' : ''
        } · <a href="/api/auth/signout?callbackUrl=%2F">Sign out</a></p>`,
      ),
    )
  })

  // JSON: the wrapper form resolves the session first and sets req.auth.
  app.get(
    '/api/me',
    auth((req, res) => {
      if (!req.auth) return res.status(401).json({ message: 'Not authenticated' })
      res.json(req.auth.user)
    }),
  )

  // For scripts: an API key with the reports:read scope (made on /api/auth/api-keys), or a signed-in browser.
  app.get('/api/reports', requireScopes('reports:read'), (req, res) => {
    res.json({ reports: [{ id: 1, title: 'Monthly sign-ins' }], for: req.auth?.user.id })
  })

  // The session's active organization (at sign-in: the user's oldest membership), the user's
  // organizations, and a form that creates one and makes it the active one.
  app.use('/organization', auth)
  app.get('/organization', async (req, res) => {
    const active = await getActiveOrganization(req) // its name and the user's roles there, read now
    const mine = await listOrganizations(req)
    const csrfToken = escapeHtml(await getCsrfToken(req, res))
    const list = mine
      .map(
        (organization) =>
          `<li>${escapeHtml(organization.name)} (${escapeHtml(organization.roles.join(', '))})${
            organization.id === active?.id
              ? ' <strong>active</strong>'
              : ` <form method="post" action="/organization/active" style="display:inline"><input type="hidden" name="csrfToken" value="${csrfToken}"><input type="hidden" name="organizationId" value="${escapeHtml(organization.id)}"><button>Make active</button></form>`
          }</li>`,
      )
      .join('\n')
    res.type('html').send(
      page(
        'Your organization',
        `<p>${active ? `Active organization: <strong>${escapeHtml(active.name)}</strong>, where your roles are <code>${escapeHtml(active.roles.join(', '))}</code>.` : 'No active organization.'}</p>
<p><a href="/projects/new">New project</a> (needs <code>project: ['create']</code> in the active organization: its owners and admins)</p>
<h2>Your organizations</h2>
<ul>${list}</ul>
<form method="post" action="/organization">
<input type="hidden" name="csrfToken" value="${csrfToken}">
<label>New organization <input name="name" required maxlength="255"></label> <button>Create</button>
</form>
<p><a href="/api/auth/organizations">Switch organization</a> (the built-in page)${active ? ` · <a href="/api/auth/sso?organizationId=${encodeURIComponent(active.id)}">Single sign-on</a> (its owners and admins)` : ''} · <a href="/dashboard">Dashboard</a> · <a href="/">Home</a></p>`,
      ),
    )
  })

  // Both functions check the form's CSRF token (req.body.csrfToken) themselves.
  const form = express.urlencoded({ extended: false })
  const refused = (res: express.Response, status: number, message: string) =>
    res.status(status).type('html').send(page('Your organization', `<p>${escapeHtml(message)}</p><p><a href="/organization">Back</a></p>`))
  app.post('/organization', form, async (req, res, next) => {
    try {
      const created = await createOrganization(req, { name: String(req.body?.name ?? '') })
      await setActiveOrganization(req, { organizationId: created.id })
      res.redirect(303, '/organization')
    } catch (error) {
      if (error instanceof MissingCSRFError) return refused(res, 403, 'The form has expired: reload the page and try again.')
      if (!(error instanceof OrganizationError)) return next(error)
      // invalid_input (no usable name), slug_taken, limit_reached (organizationsPerUser), forbidden (allowCreate)
      refused(res, error.code === 'invalid_input' ? 400 : 409, error.message)
    }
  })
  app.post('/organization/active', form, async (req, res, next) => {
    try {
      await setActiveOrganization(req, { organizationId: String(req.body?.organizationId ?? '') })
      res.redirect(303, '/organization')
    } catch (error) {
      if (error instanceof MissingCSRFError) return refused(res, 403, 'The form has expired: reload the page and try again.')
      if (!(error instanceof OrganizationError)) return next(error)
      refused(res, 404, error.message) // not_found: not one of the user's organizations
    }
  })

  // Only a role in the session's active organization that grants project: create opens it (401 signed
  // out, 403 without it): grace, a member of the demo organization, is refused until she owns one.
  app.get('/projects/new', requirePermission({ project: ['create'] }), (req, res) => {
    res.type('html').send(page('New project', `<p>You may create projects in the organization <code>${escapeHtml(req.auth?.user.activeOrganization?.id)}</code>.</p><p><a href="/organization">Your organization</a></p>`))
  })

  return { app, db }
}

/**
 * The demo organization's domain, marked verified, and its SAML connection to `idp` (updated when the
 * IdP moved). An organization's admin registers theirs with `createSsoConnection` or on the SSO page;
 * seeding has no request, so it goes to the adapter, as the organization's seeding does.
 */
async function seedSamlConnection(
  adapter: ReturnType<typeof KnexAdapter>,
  organizationId: string,
  idp: NonNullable<ExampleOptions['devSamlIdp']>,
  markVerified: (domainId: string) => Promise<unknown>,
): Promise<void> {
  const domains = await adapter.listSsoDomains(organizationId)
  const domain = domains.find((each) => each.domain === idp.domain) ?? (await adapter.createSsoDomain({ organizationId, domain: idp.domain, token: randomBytes(16).toString('hex') }))
  if (domain === 'taken') throw new Error(`The domain ${idp.domain} is another organization's.`)
  await markVerified(domain.id)
  const settings = { idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [idp.certificate], metadataUrl: null, allowIdpInitiated: false }
  const existing = (await adapter.listSsoConnections(organizationId)).find((connection) => connection.type === 'saml')
  if (!existing) await adapter.createSsoConnection({ organizationId, type: 'saml', name: 'Dev SAML identity provider', enabled: true, ssoOnly: false, defaultRole: 'member', settings })
  else if (JSON.stringify(existing.settings) !== JSON.stringify(settings)) await adapter.updateSsoConnection(existing.id, { settings })
}

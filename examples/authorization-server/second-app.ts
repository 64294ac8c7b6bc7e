/**
 * The company's second web site, whose users are the first site's: `npx tsx examples/authorization-server/second-app.ts`
 * (server.ts running). An Express app with Portcullis of its own, signing in with the generic OpenID Connect
 * provider pointed at the first app's issuer: "Sign in with Acme" takes the browser there (signed in already,
 * or signing in with ada / lovelace), and back here signed in as the same user, with a session of this site.
 * It is the confidential client `second-app`: its server keeps the secret, and Portcullis runs the code flow
 * with PKCE, checks the ID token (signature, issuer, audience, nonce) and creates the session.
 *
 * It runs on http://127.0.0.1:<SECOND_APP_PORT> while the first app is on http://localhost:<PORT>: another
 * host name, so that a browser keeps their cookies apart as it would two real sites' (a browser sends a
 * host's cookies to all its ports). Each site's session is its own: signing out of one leaves the other.
 *
 * Environment: SECOND_APP_PORT (default 3001), SERVER_URL (the first app, default http://localhost:3000),
 * SECOND_APP_CLIENT_SECRET (the client's secret, the development default of server.ts), SECOND_APP_SECRET
 * (this site's own session secret; without it, one per start).
 */
import { randomBytes } from 'node:crypto'
import express from 'express'
import Portcullis from 'portcullis'
import OIDC from 'portcullis/providers/oidc'

const port = Number(process.env.SECOND_APP_PORT ?? 3001)
const server = new URL(process.env.SERVER_URL ?? 'http://localhost:3000')
const origin = `http://127.0.0.1:${port}`
process.env.AUTH_URL = `${origin}/api/auth`

const { handlers, auth } = Portcullis({
  // This site's own secret, never the first app's: the two sites share users, not sessions. (JWT sessions: no database here.)
  secret: process.env.SECOND_APP_SECRET ?? randomBytes(32).toString('base64url'),
  providers: [
    OIDC({
      id: 'acme',
      name: 'Acme',
      // The first app's issuer: its AUTH_URL and /oauth. The endpoints and keys are discovered from it.
      issuer: new URL('/api/auth/oauth', server).href,
      clientId: 'second-app',
      clientSecret: process.env.SECOND_APP_CLIENT_SECRET ?? 'second-app-development-secret-not-for-production',
      // The example's first app speaks http on this machine. Never set this for a real issuer.
      dangerouslyAllowInsecureRequests: ['localhost', '127.0.0.1', '[::1]'].includes(server.hostname),
    }),
  ],
})

const app = express()
app.use('/api/auth', handlers)

app.get('/', async (req, res) => {
  const session = await auth(req, res)
  res.type('html').send(
    session
      ? `<p>Second app: signed in as ${escapeHtml(session.user.name)} (${escapeHtml(session.user.email)}). <a href="/api/auth/signout">Sign out of the second app</a></p>`
      : `<p>Second app: not signed in. <a href="/api/auth/signin?callbackUrl=%2F">Sign in with Acme</a></p>`,
  )
})

// The session of this site, as JSON.
app.get('/api/me', async (req, res) => {
  const session = await auth(req, res)
  if (!session) return void res.status(401).json({ message: 'Not signed in' })
  res.json(session.user)
})

function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

app.listen(port, '127.0.0.1', () => {
  console.log(`Second app running at ${origin} (signs in with ${new URL('/api/auth/oauth', server).href})`)
})

/**
 * Runs the example: `npm start` (`tsx examples/express/server.ts`). Sessions and users live in a
 * SQLite file (DATABASE_FILE, default examples/express/example.sqlite), created and migrated at
 * start. Set PORT to listen elsewhere, HOST to listen beyond this machine (default localhost), and
 * AUTH_SECRET to choose the secret (without it, Portcullis keeps a development secret in
 * .portcullis/dev-secret, git-ignored, so sign-ins and two-step verification survive restarts).
 *
 * E-mail sign-in prints its links on this console (a development transport: not sent, and refused
 * with NODE_ENV=production). Set AUTH_EMAIL_SERVER to an SMTP URL (e.g.
 * smtps://user:password@smtp.example.com:465) and AUTH_EMAIL_FROM to a sender to mail them instead.
 *
 * It also starts the local dev identity provider (dev-idp.ts, development only) on DEV_IDP_PORT
 * (default 3001), so "Sign in with Local dev identity provider" works offline. `DEV_IDP=off` skips it.
 * And the local SAML identity provider (dev-saml-idp.ts, development only) on DEV_SAML_IDP_PORT
 * (default 3002), the demo organization's single sign-on: type any address @analytical-engines.test
 * under "Work e-mail address". `DEV_SAML_IDP=off` skips it.
 *
 * Open the app as http://localhost:<PORT>: the callback URL registered at the dev IdP is
 * http://localhost:<PORT>/api/auth/callback/dev-idp, and Portcullis builds the `redirect_uri` it
 * sends from the request's Host, so a visit through http://127.0.0.1:<PORT> would send another one.
 */
import { fileURLToPath } from 'node:url'
import { createApp } from './app.js'

const port = Number(process.env.PORT ?? 3000)
const databaseFile = process.env.DATABASE_FILE ?? fileURLToPath(new URL('example.sqlite', import.meta.url))

let devIdp: { issuer: string; clientId: string; clientSecret: string } | undefined
if (process.env.DEV_IDP !== 'off') {
  // oidc-provider warns as it loads, in words that read like Portcullis's own trouble: say whose they
  // are, on the same stream (stderr), just before.
  console.warn(
    'The "oidc-provider WARNING" lines below concern the local dev identity provider only (examples/express/dev-idp.ts):' +
      ' its development login pages are insecure by design, and its author supports only Node 22 and later ("Unsupported runtime" on Node 20),' +
      ' although it runs here. Portcullis itself supports Node >= 20.19. DEV_IDP=off skips the dev IdP and these warnings.',
  )
  // Loaded only when used: oidc-provider is a devDependency.
  const { startDevIdp } = await import('./dev-idp.js')
  devIdp = await startDevIdp({
    port: Number(process.env.DEV_IDP_PORT ?? 3001),
    clientRedirectUri: `http://localhost:${port}/api/auth/callback/dev-idp`,
  })
  console.log(`Local dev identity provider (development only: any name and any password sign in) at ${devIdp.issuer}`)
}

let devSamlIdp: { entityId: string; ssoUrl: string; certificate: string; domain: string } | undefined
if (process.env.DEV_SAML_IDP !== 'off') {
  // Loaded only when used: samlify is a devDependency.
  const { startDevSamlIdp } = await import('./dev-saml-idp.js')
  devSamlIdp = await startDevSamlIdp({ port: Number(process.env.DEV_SAML_IDP_PORT ?? 3002), appOrigin: `http://localhost:${port}` })
  console.log(`Local SAML identity provider (development only: any address @${devSamlIdp.domain} signs in) at ${devSamlIdp.entityId}`)
}

// Loopback only, so a development server is not reachable from the network; HOST=0.0.0.0 opens it.
const host = process.env.HOST ?? 'localhost'
// Passkeys are bound to the origin the browser sees: http://localhost:<PORT> (AUTH_URL's, when set).
const { app } = await createApp({ databaseFile, devIdp, devSamlIdp, passkeyOrigin: process.env.AUTH_URL ? undefined : `http://localhost:${port}` })
app.listen(port, host, () => {
  console.log(`Portcullis example running at http://localhost:${port} (listening on ${host}; database: ${databaseFile})`)
})

/**
 * A local OpenID Connect identity provider for the example, so the OAuth sign-in works offline on
 * a fresh clone: `oidc-provider` running in this process, with its development login page, which
 * accepts any name and any password (the page says so), and no consent screen. server.ts starts it next to the app (`DEV_IDP=off` skips it),
 * and the example's sign-in page offers it as "Local dev identity provider".
 *
 * DEVELOPMENT STAND-IN ONLY. NEVER USE IT IN PRODUCTION. Anyone who can reach it signs in as anyone:
 * oidc-provider's development interactions are insecure by design (it says so with a warning at
 * start), its accounts are made up from the name typed in, and everything it issues lives in memory.
 * In production, sign in with a real provider (GitHub, Google, your company's OIDC issuer): see
 * the README.
 *
 * `oidc-provider` is a devDependency of Portcullis: `npm install && npm start` installs it. An app
 * built from this example that keeps the dev IdP must list it in its own devDependencies.
 *
 * @see https://github.com/panva/node-oidc-provider
 * @see https://openid.net/specs/openid-connect-core-1_0.html
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider, { type Account, type Configuration, type JWK, type KoaContextWithOIDC } from 'oidc-provider'

/** The client id the example registers with the dev IdP. */
export const DEV_CLIENT_ID = 'portcullis-example'
// A fixed secret is fine here: the dev IdP is a throwaway on the developer's machine, and it only
// redirects to the one callback URL registered below.
const DEV_CLIENT_SECRET = 'portcullis-example-dev-secret-not-for-production'

/** Options of `startDevIdp`. */
export interface DevIdpOptions {
  /** Port to listen on; default `0` (any free port). */
  port?: number
  /**
   * The host name of the issuer URL, and the interface to listen on; default `localhost`. Use
   * `127.0.0.1` with an app on `localhost` to make the IdP another site than the app, as a real one is.
   */
  host?: string
  /** The app's callback URL, the only `redirect_uri` the client may use, e.g. `http://localhost:3000/api/auth/callback/dev-idp`. */
  clientRedirectUri: string
}

/** A running dev IdP, and the client credentials the app signs in with. */
export interface DevIdp {
  /** `http://<host>:<port>`, no trailing slash: give it to `OIDC({ issuer })`. */
  issuer: string
  clientId: string
  clientSecret: string
  /** Stops listening and drops open connections. */
  close(): Promise<void>
}

/**
 * Starts the dev IdP. It listens first, so that the issuer URL holds the real port (with port 0),
 * then builds the provider for that issuer.
 *
 * Its login page takes any name and any password (the page says so): `grace` signs in as `{ sub:
 * 'grace', name: 'Grace', email: 'grace@example.test', email_verified: true }`. It then sends the
 * browser straight back to `clientRedirectUri` with a code: no consent screen, as a company's IdP
 * does for its own apps (the example is this IdP's only client). The client
 * must use PKCE (S256) and authenticate with HTTP Basic (`client_secret_basic`).
 *
 * @example
 * const idp = await startDevIdp({ port: 3001, clientRedirectUri: 'http://localhost:3000/api/auth/callback/dev-idp' })
 * OIDC({ id: 'dev-idp', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, dangerouslyAllowInsecureRequests: true })
 * await idp.close()
 */
export async function startDevIdp({ port = 0, host = 'localhost', clientRedirectUri }: DevIdpOptions): Promise<DevIdp> {
  const server = createServer()
  server.listen(port, host)
  await once(server, 'listening')
  const issuer = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`

  const provider = new Provider(issuer, devConfiguration(clientRedirectUri))
  provider.use(sayAnyPasswordWorks)
  server.on('request', provider.callback())

  return { issuer, clientId: DEV_CLIENT_ID, clientSecret: DEV_CLIENT_SECRET, close: () => close(server) }
}

function devConfiguration(clientRedirectUri: string): Configuration {
  return {
    clients: [
      {
        client_id: DEV_CLIENT_ID,
        client_secret: DEV_CLIENT_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        redirect_uris: [clientRedirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    // A fresh signing key and cookie key per start (instead of oidc-provider's built-in
    // development keys): nothing the dev IdP issued survives a restart, which suits a dev tool.
    jwks: { keys: [signingKey()] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
    // The profile and e-mail claims in the ID token too, not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    // oidc-provider only knows S256; require it from every client, as an IdP should.
    pkce: { required: () => true },
    // Fixed lifetimes, in seconds (oidc-provider notes each default it falls back to). A restart
    // forgets everything anyway: the store is in memory.
    ttl: { AuthorizationCode: 60, AccessToken: 3600, IdToken: 3600, Interaction: 3600, Session: 86400, Grant: 86400 },
    // The login page that accepts any name: the insecure part (see the top).
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, sub): Account => ({ accountId: sub, claims: () => devClaims(sub) }),
    loadExistingGrant: grantWithoutConsent,
  }
}

/**
 * No consent screen: the grant the client asks for is made on the spot once the user has logged in
 * (oidc-provider's recipe for first-party clients). The example is the only client, and a developer
 * signing in to their own app expects to land back in it, not to "authorize" it.
 */
async function grantWithoutConsent(ctx: KoaContextWithOIDC) {
  const { client, session, result } = ctx.oidc
  if (!client || !session?.accountId) return undefined
  const grantId = result?.consent?.grantId ?? session.grantIdFor(client.clientId)
  if (grantId) return ctx.oidc.provider.Grant.find(grantId)
  const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
  grant.addOIDCScope('openid profile email')
  await grant.save()
  return grant
}

/**
 * oidc-provider's development login page asks for a login and a password without saying that any
 * will do; this adds the sentence under its title.
 */
async function sayAnyPasswordWorks(ctx: { path: string; body: unknown }, next: () => Promise<unknown>) {
  await next()
  if (ctx.path.startsWith('/interaction/') && typeof ctx.body === 'string' && ctx.body.includes('name="password"')) {
    ctx.body = ctx.body.replace('</h1>', '</h1>\n<p class="dev-idp-note">Development identity provider: any login name and any password sign you in.</p>')
  }
}

/** The made-up account of a dev login name. */
function devClaims(login: string) {
  return {
    sub: login,
    name: login.charAt(0).toUpperCase() + login.slice(1),
    email: `${login}@example.test`,
    email_verified: true,
  }
}

function signingKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), alg: 'RS256', use: 'sig' }
}

async function close(server: Server): Promise<void> {
  const closed = once(server, 'close')
  server.close()
  server.closeAllConnections()
  await closed
}

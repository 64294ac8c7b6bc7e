/**
 * A real OpenID Connect provider (`oidc-provider`) in-process, for the OAuth and OIDC flow tests,
 * plus a GitHub-style plain-OAuth API endpoint on the same server. Pair it with `Browser` from
 * `./browser.js` to sign in headlessly through its development login and consent pages.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import type Provider from 'oidc-provider'
import type { ClientMetadata, Configuration, KoaContextWithOIDC } from 'oidc-provider'

/** A client registered at the test IdP; any further `oidc-provider` client metadata may be added. */
export interface IdpClient {
  client_id: string
  client_secret?: string
  redirect_uris: string[]
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none'
  response_types?: string[]
  grant_types?: string[]
  [k: string]: unknown
}

/** Options of `startIdp`. */
export interface IdpOptions {
  clients: IdpClient[]
  /** The interface to listen on and the issuer's host name; default `127.0.0.1`. */
  host?: string
  /**
   * Claims to merge over the defaults for a login (`undefined` drops one); `sub` is always the login.
   * `use` says where they go: `'id_token'`, `'userinfo'`, or `undefined` for the GitHub-like API.
   */
  claims?: (login: string, use?: ClaimUse) => Record<string, unknown>
  /**
   * The issuer's path, e.g. `/realms/test` (Keycloak's shape) or `/` (Auth0's, with its trailing
   * slash): the IdP is then served under it and `issuer` ends with it. Default: none.
   */
  issuerPath?: string
  /**
   * Claim names beyond the standard ones that the IdP releases with the `openid` scope (in the ID
   * token and at userinfo), e.g. Entra's `oid` and `tid`; their values come from `claims`.
   */
  releasedClaims?: string[]
  /**
   * Seconds an access token lives, or a function asked at each issue (a test can issue short-lived
   * tokens at sign-in and long-lived ones on refresh). Default one hour.
   */
  accessTokenTtl?: number | (() => number)
  /**
   * `true`: every refresh rotates the refresh token, and a used one coming back revokes the whole
   * grant (oidc-provider's reuse detection). Default: oidc-provider's own rule (public clients only).
   * Refresh tokens are issued to clients whose `grant_types` include `refresh_token`, for sign-ins
   * with the `offline_access` scope and `prompt=consent`.
   */
  rotateRefreshToken?: boolean
  /** Enables the token revocation endpoint (RFC 7009) at `revocationEndpoint`. Default off. */
  revocation?: boolean
  /**
   * Where the `profile` and `email` claims go: `'idToken'` (default) puts them in the ID token as
   * well as at userinfo; `'userinfo'` at userinfo only, the ID token carrying `sub` and the released
   * claims (oidc-provider's `conformIdTokenClaims`, what OIDC Core §5.4 says for the code flow).
   */
  profileClaimsIn?: 'idToken' | 'userinfo'
  /** `false`: no userinfo endpoint, and none in the discovery document. Default on. */
  userinfo?: boolean
}

/** A running test IdP. */
export interface TestIdp {
  /** `http://127.0.0.1:<port>` followed by `issuerPath` (without one: no trailing slash). */
  issuer: string
  /**
   * A plain-OAuth "API" endpoint like GitHub's `/user`: GET with `Authorization: Bearer <access
   * token>` answers `{ id, login, name, email }` of the account, 401 JSON otherwise. Works for
   * access tokens issued without the `openid` scope, which the IdP's own userinfo endpoint refuses.
   */
  apiUrl: string
  authorizationEndpoint: string
  tokenEndpoint: string
  /** Empty with `userinfo: false`. */
  userinfoEndpoint: string
  /** With `revocation: true`. */
  revocationEndpoint: string
  jwksUri: string
  provider: Provider
  /**
   * Signs `claims` exactly as given (no defaults added) as a JWT with the IdP's own signing key
   * (RS256, its `kid`): an ID token for attack tests (wrong `aud`, `iss`, `exp`, `nonce`). All IdPs
   * of one process share that key; for a token signed by a stranger, use a key of the test's own.
   */
  signIdToken(claims: Record<string, unknown>): Promise<string>
  close(): Promise<void>
}

interface SigningKey {
  privateKey: CryptoKey
  jwk: JWK & { kid: string }
}

type ClaimUse = 'id_token' | 'userinfo'
type ClaimsFor = (login: string, use?: ClaimUse) => Record<string, unknown> & { sub: string }

const API_PATH = '/api/me'
const GITHUB_SCOPES = ['read:user', 'user:email']
const HOUR = 60 * 60
const DAY = 24 * HOUR

/**
 * Starts an `oidc-provider` on an ephemeral port with the given clients. Any login name signs in
 * on its development login page; account `alice` has the claims `{ sub: 'alice', name: 'Alice
 * Example', email: 'alice@example.com', email_verified: true, preferred_username: 'alice' }`.
 * Scopes: `openid`, `profile`, `email`, `offline_access` and GitHub's `read:user`, `user:email`.
 * PKCE is supported but never required, `response_mode=form_post` is available, authorization
 * responses carry `iss` (RFC 9207), ID tokens carry the profile and email claims too, and access
 * tokens are opaque (none is bound to a `resource`).
 *
 * @example
 * const idp = await startIdp({ clients: [{ client_id: 'app', client_secret: 'app-secret', redirect_uris: ['http://127.0.0.1:1/callback'] }] })
 * try {
 *   // …sign in with `new Browser().authorize(url)`…
 * } finally {
 *   await idp.close()
 * }
 * @see https://openid.net/specs/openid-connect-core-1_0.html
 */
export async function startIdp(options: IdpOptions): Promise<TestIdp> {
  const host = options.host ?? '127.0.0.1'
  const claimsFor = accountClaims(options.claims)
  const [ProviderClass, key, server] = await Promise.all([loadProvider(), loadSigningKey(), listen(host)])
  const origin = `http://${urlHost(host)}:${(server.address() as AddressInfo).port}`
  const issuer = origin + (options.issuerPath ?? '')
  const mountPath = new URL(issuer).pathname.replace(/\/$/, '')
  const provider = constructProvider(ProviderClass, issuer, withTokenOptions(providerConfiguration(options.clients, key, claimsFor, options.releasedClaims ?? []), options))
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', origin).pathname === API_PATH) void answerApiRequest(provider, claimsFor, req, res)
    else if (mountPath && !mountedUnder(req, mountPath)) res.writeHead(404).end()
    // Composed per request, so middleware a test adds with `provider.use` takes effect.
    else void provider.callback()(req, res)
  })
  return {
    issuer,
    apiUrl: origin + API_PATH,
    authorizationEndpoint: provider.urlFor('authorization'),
    tokenEndpoint: provider.urlFor('token'),
    userinfoEndpoint: options.userinfo === false ? '' : provider.urlFor('userinfo'),
    revocationEndpoint: options.revocation ? provider.urlFor('revocation') : '',
    jwksUri: provider.urlFor('jwks'),
    provider,
    signIdToken: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.jwk.kid }).sign(key.privateKey),
    close: () => close(server),
  }
}

/**
 * From now on, the ID token in each response of `idp`'s token endpoint is replaced by what `forge`
 * makes of the genuine one's claims and key id (`undefined`: left as it is). The client sees it at
 * the IdP's own, discovered token endpoint: the attack of a compromised or impersonated endpoint.
 */
export function forgeIdTokens(idp: TestIdp, forge: (claims: Record<string, unknown>, kid: string) => Promise<string> | undefined): void {
  idp.provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next()
    const body = ctx.body as Record<string, unknown> | undefined
    if (ctx.oidc?.route !== 'token' || typeof body?.id_token !== 'string') return
    const forged = await forge(decodeJwt(body.id_token), decodeProtectedHeader(body.id_token).kid!)
    if (forged !== undefined) ctx.body = { ...body, id_token: forged }
  })
}

/**
 * Serves the IdP under `mountPath`: oidc-provider finds its mount point from `originalUrl` (what
 * Express would set) and routes on the rest of `url`.
 */
function mountedUnder(req: IncomingMessage & { originalUrl?: string }, mountPath: string): boolean {
  const url = req.url ?? '/'
  if (url !== mountPath && !url.startsWith(`${mountPath}/`) && !url.startsWith(`${mountPath}?`)) return false
  req.originalUrl = url
  req.url = url.slice(mountPath.length) || '/'
  return true
}

function providerConfiguration(clients: IdpClient[], signingKey: SigningKey, claimsFor: ClaimsFor, releasedClaims: string[]): Configuration {
  return {
    clients: clients.map((client) => ({ ...client }) as ClientMetadata),
    jwks: { keys: [signingKey.jwk] },
    cookies: { keys: ['portcullis-test-idp-cookie-key'] },
    claims: {
      openid: ['sub', ...releasedClaims],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    // A request whose scopes are all unknown is denied, so GitHub's are registered for its tests.
    scopes: ['openid', 'offline_access', ...GITHUB_SCOPES],
    // oidc-provider's own defaults, stated so that it does not print a notice for each of them.
    ttl: { AccessToken: HOUR, AuthorizationCode: 60, IdToken: HOUR, Interaction: HOUR, Grant: 14 * DAY, Session: 14 * DAY, RefreshToken: 14 * DAY },
    // oidc-provider's default requires PKCE only for public clients; the engine is also tested
    // against providers configured for `state` alone, so a confidential client may omit it.
    pkce: { required: () => false },
    conformIdTokenClaims: false,
    // claimsParameter: providers such as Twitch ask for claims with the `claims` parameter.
    features: { devInteractions: { enabled: true }, claimsParameter: { enabled: true } },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: (use: string) => claimsFor(sub, use as ClaimUse) }),
    renderError: (ctx, out) => {
      ctx.type = 'text'
      ctx.body = Object.entries(out).map(([key, value]) => `${key}: ${String(value)}`).join('\n')
    },
  }
}

/** The access-token lifetime, refresh-token rotation, revocation and claim-placement options, over the base configuration. */
function withTokenOptions(configuration: Configuration, options: IdpOptions): Configuration {
  const { accessTokenTtl, rotateRefreshToken, revocation, profileClaimsIn, userinfo } = options
  const configured: Configuration = { ...configuration }
  if (profileClaimsIn === 'userinfo') configured.conformIdTokenClaims = true
  if (userinfo === false) configured.features = { ...configured.features, userinfo: { enabled: false } }
  if (accessTokenTtl !== undefined) configured.ttl = { ...configuration.ttl, AccessToken: typeof accessTokenTtl === 'function' ? () => accessTokenTtl() : accessTokenTtl }
  if (rotateRefreshToken !== undefined) configured.rotateRefreshToken = rotateRefreshToken
  // Any registered client may revoke its own tokens (the policy's default, stated to keep it quiet).
  if (revocation) configured.features = { ...configured.features, revocation: { enabled: true, allowedPolicy: async () => true } }
  return configured
}

function accountClaims(override: IdpOptions['claims']): ClaimsFor {
  return (login, use) => ({
    name: `${login.charAt(0).toUpperCase()}${login.slice(1)} Example`,
    email: `${login}@example.com`,
    email_verified: true,
    preferred_username: login,
    ...override?.(login, use),
    sub: login,
  })
}

/** GitHub's `/user`, reduced: who the bearer of a (possibly non-OpenID) access token is. */
async function answerApiRequest(provider: Provider, claimsFor: ClaimsFor, req: IncomingMessage, res: ServerResponse) {
  try {
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1]
    const accessToken = req.method === 'GET' && token ? await provider.AccessToken.find(token) : undefined
    if (!accessToken) return sendJson(res, 401, { message: 'Bad credentials' }, { 'www-authenticate': 'Bearer error="invalid_token"' })
    const claims = claimsFor(accessToken.accountId)
    sendJson(res, 200, { id: claims.sub, login: claims.preferred_username, name: claims.name, email: claims.email })
  } catch (error) {
    sendJson(res, 500, { message: String(error) })
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

let providerClass: Promise<typeof Provider> | undefined

/** Imported once, on first use, so that its load-time runtime check can be muted (below). */
function loadProvider(): Promise<typeof Provider> {
  providerClass ??= (async () => {
    const unmute = muteProviderWarnings()
    try {
      return (await import('oidc-provider')).default
    } finally {
      unmute()
    }
  })()
  return providerClass
}

/**
 * oidc-provider warns on stderr about the quick-start features used here on purpose (development
 * interactions, in-memory adapter) and that Node 20 is not a supported runtime (it works). Only
 * its own lines are dropped, and only while the module loads and a provider is constructed.
 */
function muteProviderWarnings(): () => void {
  const warn = console.warn
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider WARNING:')) warn(...args)
  }
  return () => {
    console.warn = warn
  }
}

function constructProvider(ProviderClass: typeof Provider, issuer: string, configuration: Configuration): Provider {
  const unmute = muteProviderWarnings()
  try {
    return new ProviderClass(issuer, configuration)
  } finally {
    unmute()
  }
}

let sharedSigningKey: Promise<SigningKey> | undefined

/** One RSA key per process, shared by its IdPs: generating one takes about half a second here. */
function loadSigningKey(): Promise<SigningKey> {
  sharedSigningKey ??= (async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const jwk = await exportJWK(privateKey)
    return { privateKey, jwk: { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' } }
  })()
  return sharedSigningKey
}

async function listen(host: string): Promise<Server> {
  const server = createServer()
  server.listen(0, host)
  await once(server, 'listening')
  return server
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

async function close(server: Server): Promise<void> {
  const closed = once(server, 'close')
  server.close()
  server.closeAllConnections()
  await closed
}

/**
 * OAuth 2 and OIDC providers as the engine uses them: resolved once at init from what the app
 * wrote (and the environment), validated with errors that name the field to fix, and frozen. Nothing
 * here talks to the network or loads openid-client: that happens on the first sign-in (src/features/oauth/client.ts).
 *
 * @see spec/auth-library-spec.md §2.1 (`providers`, `redirectProxyUrl`), §5.3 (env inference)
 */
import { InvalidConfigurationError } from '../../errors.js'
import { type OAuthCheck } from './errors.js'
import type { ClientSecretFunction, OAuthConfig, Profile, TokenEndpointAuthMethod, TokenRequestContext, TokenSet, UserinfoContext } from '../../providers/oauth.js'
import type { OIDCConfig } from '../../providers/oidc.js'
import type { User } from '../../types.js'

type Env = Readonly<Record<string, string | undefined>>

/** An endpoint with its URL (absent for `oidc`, where discovery gives it) and extra parameters. */
export interface ResolvedEndpoint {
  readonly url: string | undefined
  readonly params: Readonly<Record<string, string>>
}

/** The token endpoint, or a custom exchange (`oauth` only). */
export type ResolvedToken = ResolvedEndpoint & { readonly request: ((context: TokenRequestContext) => Promise<TokenSet> | TokenSet) | undefined }

/** The userinfo endpoint, or `false` for a profile from the ID token alone. */
export type ResolvedUserinfo =
  | false
  | (ResolvedEndpoint & { readonly request: ((context: UserinfoContext) => Promise<Profile> | Profile) | undefined })

/** A configured OAuth 2 or OIDC provider. */
export interface OAuthProvider {
  readonly id: string
  readonly name: string
  readonly type: 'oauth' | 'oidc'
  readonly clientId: string
  /** A fixed secret, or a function called for the current one before each token request. */
  readonly clientSecret: string | ClientSecretFunction | undefined
  readonly clientAuth: TokenEndpointAuthMethod
  readonly idTokenSignedResponseAlg: string | undefined
  /** `oidc`: what discovery starts from; `oauth`: optional (checks `iss` and ID tokens when given). */
  readonly issuer: string | undefined
  readonly authorization: ResolvedEndpoint
  readonly token: ResolvedToken
  readonly userinfo: ResolvedUserinfo
  readonly jwksUri: string | undefined
  readonly checks: readonly OAuthCheck[]
  readonly profile: (profile: Profile, tokens: TokenSet) => Promise<User> | User
  readonly allowDangerousEmailAccountLinking: boolean
  /** The base of `redirect_uri` when set (this provider's, else the config's). */
  readonly redirectProxyUrl: string | undefined
  readonly allowInsecureRequests: boolean
  /**
   * The fetch its requests go through instead of the plain one (the SSO wing's, which refuses
   * internal addresses for an identity provider an organization registered). Absent for configured providers.
   */
  readonly fetch?: ((url: string, options: RequestInit) => Promise<Response>) | undefined
}

/**
 * The standard OIDC claims as the user (spec: `sub`, `name`, `email`, `picture`). The address is
 * marked verified only when the IdP says so (`email_verified: true`); unmarked, it is not used.
 * @see https://openid.net/specs/openid-connect-core-1_0.html#StandardClaims
 */
export function defaultProfile(profile: Profile): User {
  return {
    id: profile.sub ?? undefined,
    name: profile.name ?? (profile.preferred_username as string | undefined) ?? (profile.nickname as string | undefined) ?? null,
    email: profile.email ?? null,
    emailVerified: profile.email_verified === true,
    image: profile.picture ?? null,
  }
}

/**
 * The provider id as it appears in env names: upper snake case (`azure-ad` → `AZURE_AD`).
 * @see spec/auth-library-spec.md §5.3
 */
export function envPrefix(id: string): string {
  return `AUTH_${id.replace(/-/g, '_').toUpperCase()}`
}

/**
 * Resolves one provider: env inference, defaults, validation.
 *
 * @param input The provider object (a built-in called bare has already been called).
 * @param where How the error messages name it, e.g. `providers[1] ("github")`.
 * @param redirectProxyUrl The config's `redirectProxyUrl` (or `AUTH_REDIRECT_PROXY_URL`).
 * @throws InvalidConfigurationError naming the field, or the env variable, to set.
 */
export function resolveOAuthProvider(
  input: OAuthConfig | OIDCConfig,
  env: Env,
  redirectProxyUrl: string | undefined,
): OAuthProvider {
  const where = `Provider "${input.id}"`
  const prefix = envPrefix(input.id)
  const fail = (message: string): never => {
    throw new InvalidConfigurationError(`${where}: ${message}`)
  }
  const insecure = input.dangerouslyAllowInsecureRequests === true

  const clientId = input.clientId ?? env[`${prefix}_ID`]
  if (typeof clientId !== 'string' || clientId.length === 0) fail(`no client id. Set ${prefix}_ID, or pass clientId.`)
  const clientAuth = input.client?.token_endpoint_auth_method ?? 'client_secret_basic'
  if (!['client_secret_basic', 'client_secret_post', 'none'].includes(clientAuth)) {
    fail(`client.token_endpoint_auth_method must be "client_secret_basic", "client_secret_post" or "none"; got "${String(clientAuth)}".`)
  }
  const clientSecret = input.clientSecret ?? env[`${prefix}_SECRET`]
  const secretGiven = (typeof clientSecret === 'string' && clientSecret.length > 0) || typeof clientSecret === 'function'
  if (clientAuth !== 'none' && !secretGiven) {
    fail(`no client secret. Set ${prefix}_SECRET, or pass clientSecret (or client.token_endpoint_auth_method "none" for a public client).`)
  }

  const issuer = input.issuer ?? env[`${prefix}_ISSUER`]
  if (issuer !== undefined) checkUrl(fail, 'issuer', issuer, insecure)
  if (input.type === 'oidc' && issuer === undefined) fail(`type "oidc" needs issuer (the provider's issuer URL); set ${prefix}_ISSUER, or pass issuer.`)

  const authorization = resolveEndpoint(fail, 'authorization', input.authorization, insecure)
  const token = resolveToken(fail, input, insecure)
  const userinfo = resolveUserinfo(fail, input.userinfo, insecure)
  if (input.type === 'oauth') {
    // Without discovery, the endpoints must be given.
    if (!authorization.url) fail('type "oauth" needs authorization (the authorization endpoint URL).')
    if (!token.url && !token.request) fail('type "oauth" needs token (the token endpoint URL, or { request(context) }).')
    if (userinfo === false || (!userinfo.url && !userinfo.request)) {
      fail('type "oauth" needs userinfo (a URL, or { request(context) }) to get the profile from; for an OpenID provider use type "oidc".')
    }
  }
  if (input.jwks_endpoint !== undefined) checkUrl(fail, 'jwks_endpoint', input.jwks_endpoint, insecure)

  const checks = resolveChecks(fail, input)
  const proxy = input.redirectProxyUrl ?? redirectProxyUrl
  if (proxy !== undefined) {
    checkUrl(fail, 'redirectProxyUrl', proxy, insecure)
    // The proxy deployment finds the origin deployment through the state, so state is required.
    if (!checks.includes('state')) checks.push('state')
  }
  if (input.profile !== undefined && typeof input.profile !== 'function') fail('profile must be a function (profile, tokens) => user.')

  return Object.freeze({
    id: input.id,
    name: typeof input.name === 'string' && input.name ? input.name : input.id,
    type: input.type,
    clientId: clientId as string,
    clientSecret: clientAuth === 'none' ? undefined : clientSecret,
    clientAuth,
    idTokenSignedResponseAlg: input.client?.id_token_signed_response_alg,
    issuer,
    authorization,
    token,
    userinfo,
    jwksUri: input.jwks_endpoint,
    checks: Object.freeze(checks),
    profile: (input.profile as OAuthProvider['profile'] | undefined) ?? defaultProfile,
    allowDangerousEmailAccountLinking: input.allowDangerousEmailAccountLinking === true,
    redirectProxyUrl: proxy?.replace(/\/+$/, ''),
    allowInsecureRequests: insecure,
  })
}

type Fail = (message: string) => never

const CHECKS: readonly OAuthCheck[] = ['pkce', 'state', 'nonce']

function resolveChecks(fail: Fail, input: OAuthConfig | OIDCConfig): OAuthCheck[] {
  const given = input.checks ?? (input.type === 'oidc' ? ['pkce', 'nonce'] : ['pkce'])
  if (!Array.isArray(given) || given.some((check) => !CHECKS.includes(check))) {
    fail(`checks must be a list of "pkce", "state" and "nonce"; got ${JSON.stringify(given)}.`)
  }
  // Without PKCE or state nothing ties the callback to the browser that started the sign-in (login CSRF).
  if (!given.includes('pkce') && !given.includes('state')) fail('checks must include "pkce" or "state".')
  if (input.type === 'oauth' && given.includes('nonce') && !input.issuer) fail('the nonce check needs ID tokens: use type "oidc", or give issuer and jwks_endpoint.')
  return [...new Set(given)]
}

function resolveEndpoint(fail: Fail, field: string, value: unknown, insecure: boolean): ResolvedEndpoint {
  if (value === undefined) return { url: undefined, params: Object.freeze({}) }
  if (typeof value === 'string') {
    checkUrl(fail, field, value, insecure)
    return { url: value, params: Object.freeze({}) }
  }
  if (!value || typeof value !== 'object') fail(`${field} must be a URL or { url, params }.`)
  const { url, params } = value as { url?: unknown; params?: unknown }
  if (url !== undefined) checkUrl(fail, `${field}.url`, url, insecure)
  return { url: url as string | undefined, params: Object.freeze(resolveParams(fail, `${field}.params`, params)) }
}

function resolveToken(fail: Fail, input: OAuthConfig | OIDCConfig, insecure: boolean): ResolvedToken {
  const endpoint = resolveEndpoint(fail, 'token', input.token, insecure)
  const request = input.token && typeof input.token === 'object' ? (input.token as { request?: unknown }).request : undefined
  if (request !== undefined && typeof request !== 'function') fail('token.request must be a function (context) => token set.')
  // An OIDC token response carries the ID token, which only the standard exchange validates.
  if (request !== undefined && input.type === 'oidc') fail('token.request is for type "oauth" providers; an "oidc" provider\'s token response must be validated by the engine.')
  return { ...endpoint, request: request as ResolvedToken['request'] }
}

function resolveUserinfo(fail: Fail, value: unknown, insecure: boolean): ResolvedUserinfo {
  if (value === false) return false
  const endpoint = resolveEndpoint(fail, 'userinfo', value, insecure)
  const request = value && typeof value === 'object' ? (value as { request?: unknown }).request : undefined
  if (request !== undefined && typeof request !== 'function') fail('userinfo.request must be a function (context) => profile.')
  return { ...endpoint, request: request as ((context: UserinfoContext) => Promise<Profile>) | undefined }
}

function resolveParams(fail: Fail, field: string, params: unknown): Record<string, string> {
  if (params === undefined) return {}
  if (!params || typeof params !== 'object' || Array.isArray(params)) fail(`${field} must be an object of strings.`)
  const resolved: Record<string, string> = {}
  for (const [key, value] of Object.entries(params as object)) {
    if (value === undefined) continue
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') fail(`${field}.${key} must be a string.`)
    resolved[key] = String(value)
  }
  return resolved
}

function checkUrl(fail: Fail, field: string, value: unknown, insecure: boolean): void {
  let url: URL
  try {
    url = new URL(String(value))
  } catch {
    return fail(`${field} must be an absolute URL; got "${String(value)}".`)
  }
  if (typeof value !== 'string') fail(`${field} must be a string URL.`)
  if (url.protocol === 'https:') return
  if (url.protocol === 'http:') {
    if (insecure) return
    fail(`${field} is an http: URL ("${value}"); use https, or set dangerouslyAllowInsecureRequests for a local development provider.`)
  }
  fail(`${field} must be an https URL; got "${String(value)}".`)
}

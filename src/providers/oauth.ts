/**
 * Generic OAuth 2 providers (`type: 'oauth'`): for APIs that are not OpenID Connect providers, with
 * explicit `authorization`, `token` and `userinfo` endpoints. The sign-in runs on openid-client
 * (authorization code grant with PKCE by default); the profile comes from the userinfo endpoint.
 *
 * @example
 * ```ts
 * import OAuth from 'portcullis/providers/oauth'
 *
 * OAuth({
 *   id: 'acme',
 *   name: 'Acme',
 *   authorization: { url: 'https://acme.example/oauth/authorize', params: { scope: 'read:user' } },
 *   token: 'https://acme.example/oauth/token',
 *   userinfo: 'https://api.acme.example/me',
 *   profile: (me) => ({ id: String(me.id), name: me.display_name, email: me.email, image: me.avatar }),
 * })
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749 OAuth 2.0
 * @see https://www.rfc-editor.org/rfc/rfc7636 PKCE
 */
import type { OAuthCheck } from '../features/oauth/errors.js'
import type { Awaitable, Profile, TokenSet, User } from '../types.js'

export type { OAuthCheck } from '../features/oauth/errors.js'
export type { Profile, TokenSet } from '../types.js'


/** An endpoint: its URL, or the URL with extra query (authorization) or body (token) parameters. */
export type EndpointConfig = string | { url?: string | undefined; params?: Record<string, string> | undefined }

/** What a custom userinfo `request` receives. */
export interface UserinfoContext {
  /** The token endpoint's answer. */
  tokens: TokenSet
  /** The provider, with the userinfo URL when one is configured. */
  provider: { id: string; clientId: string; userinfoUrl: string | undefined }
  /**
   * Every parameter of the authorization response (`code`, `state`, and whatever else the provider
   * sent, e.g. Apple's `user` on a first sign-in). Anyone can put anything here: treat it as
   * untrusted input, and take nothing from it that the ID token or the API can vouch for. Empty when
   * the profile is not fetched from a callback.
   */
  params: URLSearchParams
}

/**
 * The userinfo endpoint: a URL, `{ url, params }` (params go in the query), or `{ request }` for APIs
 * that are not standard (several requests, another auth scheme). `request` returns the profile.
 */
export type UserinfoConfig = EndpointConfig | { url?: string | undefined; params?: Record<string, string> | undefined; request: (context: UserinfoContext) => Awaitable<Profile> }

/** What a custom token `request` receives: the verified callback, ready to exchange. */
export interface TokenRequestContext {
  /** The authorization code. */
  code: string
  /** The `redirect_uri` of the authorization request (the token request must repeat it). */
  redirectUri: string
  /** The PKCE verifier, when the `pkce` check is on (send it as `code_verifier`). */
  codeVerifier: string | undefined
  /** Every parameter of the callback (`code`, `state`, and whatever else the provider sent). */
  params: URLSearchParams
  provider: { id: string; clientId: string; tokenUrl: string | undefined }
}

/**
 * The token endpoint: a URL, `{ url, params }` (params go in the body), or, for an `oauth` provider
 * whose token exchange is not standard, `{ request }`, which exchanges the code and returns the
 * token set. The checks (state, PKCE) are verified before `request` runs.
 */
export type TokenConfig = EndpointConfig | { url?: string | undefined; params?: Record<string, string> | undefined; request: (context: TokenRequestContext) => Awaitable<TokenSet> }

/**
 * A client secret computed when it is needed: called before each token request (code exchange,
 * refresh), so a secret with an expiry, such as Apple's signed JWT, can be renewed without
 * restarting. Cache inside it when computing is costly.
 *
 * @example
 * ```ts
 * OIDC({ id: 'corp', name: 'Corp', clientSecret: async ({ clientId }) => secretStore.current(clientId) })
 * ```
 */
export type ClientSecretFunction = (client: { clientId: string }) => Awaitable<string>

/** How the client authenticates at the token endpoint. `none` is a public client (PKCE only). */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

/** Options every OAuth 2 and OIDC provider takes. */
export interface OAuthProviderOptions<P extends Profile = Profile> {
  /** Used in URLs (`/signin/<id>`, `/callback/<id>`) and env names (`AUTH_<ID>_ID`). */
  id: string
  /** Shown on the sign-in button. */
  name: string
  /** Default: `AUTH_<ID>_ID`. */
  clientId?: string | undefined
  /**
   * Default: `AUTH_<ID>_SECRET`. Not needed with `client.token_endpoint_auth_method: 'none'`. A
   * function computes it per token request (see `ClientSecretFunction`).
   */
  clientSecret?: string | ClientSecretFunction | undefined
  /** The authorization server's issuer identifier; `oidc` discovers the endpoints from it. Default: `AUTH_<ID>_ISSUER`. */
  issuer?: string | undefined
  authorization?: EndpointConfig | undefined
  /** `{ request }` is for `oauth` providers only: an `oidc` token response must go through ID token validation. */
  token?: TokenConfig | undefined
  userinfo?: UserinfoConfig | undefined
  /** The provider's signing keys, for an `oauth` provider that returns ID tokens. */
  jwks_endpoint?: string | undefined
  /** Client settings, as registered with the provider. */
  client?: {
    /** Default `client_secret_basic`. */
    token_endpoint_auth_method?: TokenEndpointAuthMethod | undefined
    /** The ID token signature algorithm, when the provider does not use RS256. */
    id_token_signed_response_alg?: string | undefined
  } | undefined
  /** Default `['pkce']`, plus `nonce` for `oidc`; `state` is added when a redirect proxy is used. */
  checks?: OAuthCheck[] | undefined
  /** Maps the provider's profile to the user. Must return an `id`: it becomes `providerAccountId`. */
  profile?(profile: P, tokens: TokenSet): Awaitable<User>
  /**
   * Signs a provider account in as the existing user with the same e-mail address even though that
   * user never linked this provider. Only safe with providers that verify e-mail addresses and never
   * let them change hands; otherwise whoever controls the address there takes over the account here.
   */
  allowDangerousEmailAccountLinking?: boolean | undefined
  /** Overrides the config's `redirectProxyUrl` for this provider. */
  redirectProxyUrl?: string | undefined
  /**
   * Allows `http:` endpoints and issuers. For a local development identity provider and tests only:
   * tokens would otherwise travel unencrypted.
   */
  dangerouslyAllowInsecureRequests?: boolean | undefined
}

/** A generic OAuth 2 provider (spec §1.2 type `oauth`). */
export interface OAuthConfig<P extends Profile = Profile> extends OAuthProviderOptions<P> {
  type: 'oauth'
}

/** Overrides of a built-in provider: every field optional. */
export type OAuthUserConfig<P extends Profile = Profile> = Partial<OAuthProviderOptions<P>>

/**
 * A generic OAuth 2 provider. A plain object with `type: 'oauth'` works the same; this function
 * only adds the type and its checking.
 *
 * @param options Endpoints, client id and secret (or `AUTH_<ID>_ID`/`_SECRET`), profile mapping.
 */
export default function OAuth<P extends Profile = Profile>(options: Omit<OAuthConfig<P>, 'type'>): OAuthConfig<P> {
  return { ...options, type: 'oauth' }
}

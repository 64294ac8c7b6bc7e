/**
 * The engine's half of every OAuth 2 and OIDC callback: read the response (query, or a form_post
 * body), decide whether it is forwarded (redirect proxy), verify the checks, exchange the code, get
 * and map the profile, and return the verified result. The callback action (actions/callback/
 * provider-callback.ts) signs in with it; how the profile is obtained differs by provider type and
 * lives in features/oauth/routes/oauth-callback.ts and oidc.ts.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 * @see https://openid.net/specs/oauth-v2-form-post-response-mode-1_0.html
 */
import * as oidc from 'openid-client'
import { CallbackRouteError } from '../../errors.js'
import { InvalidCheckError, OAuthCallbackError } from './errors.js'
import { describeError, redactError } from '../../events.js'
import type { Profile, TokenSet } from '../../providers/oauth.js'
import type { Account, User } from '../../types.js'
import { callbackUrl, redirectUri } from './authorize.js'
import { hasCheckCookies, proxyDestination, verifyChecks } from './checks.js'
import type { SessionRequest } from '../../session/types.js'
import { originAllowed } from '../../security/redirect.js'
import { logValue } from '../../logger.js'
import { clientConfiguration, hasIssuer } from './client.js'
import { exchangeError, providerError } from './provider-errors.js'
import type { OAuthProvider } from './provider.js'

/** The token endpoint's answer as openid-client returns it (with `claims()` for the ID token). */
export type Tokens = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers

/** What a provider type's profile step receives. */
export interface ProfileInput {
  configuration: oidc.Configuration
  provider: OAuthProvider
  tokens: Tokens
  /** The authorization response's parameters (absent outside a callback). */
  params?: URLSearchParams
}

/** How one provider type runs its callback. */
export interface CallbackSteps {
  /** `oidc`: the token response must carry an ID token, which is validated. */
  idTokenExpected: boolean
  /** The provider's profile, from the ID token and/or the userinfo endpoint. */
  profile(input: ProfileInput): Promise<Profile>
}

/** The request an OAuth callback is read from: the session's cookies, where the site is, and the response. */
export interface CallbackRequest extends SessionRequest {
  readonly method: 'GET' | 'POST'
  readonly origin: string
  readonly basePath: string
  readonly query: URLSearchParams
  readonly body: Readonly<Record<string, unknown>>
}

/** A provider's answer checked and mapped: what the sign-in is made of. */
export interface VerifiedSignIn {
  provider: OAuthProvider
  /** What `profile()` returned, the address kept only when verified; its `id` is the account's `providerAccountId`. */
  user: User & { id: string }
  account: Account
  profile: Profile
}

/**
 * Where a callback goes before anything is checked: a redirect to answer with (a `form_post` turned
 * into a same-site GET; the redirect proxy forwarding to the deployment that started the sign-in),
 * or the parameters to verify here, with the foreign origin the state named when it is not allowed.
 */
export type CallbackRoute = { readonly redirect: string; readonly status: 302 | 303 } | { readonly params: URLSearchParams; readonly refusedOrigin: string | undefined }

/** Routes a callback (see CallbackRoute); changes nothing. */
export function routeCallback(ctx: CallbackRequest, provider: OAuthProvider): CallbackRoute {
  const params = responseParams(ctx)
  // response_mode=form_post arrives as a cross-site POST, which SameSite=Lax cookies do not
  // accompany; a same-site 303 turns it into a top-level GET, which they do.
  if (ctx.method === 'POST' && !hasCheckCookies(ctx)) return { status: 303, redirect: `${callbackUrl(ctx, provider)}?${params}` }
  const forward = provider.redirectProxyUrl ? proxyDestination(ctx, provider, params.get('state')) : undefined
  const forwardTo = forward?.endsWith(`/callback/${provider.id}`) ? new URL(forward).origin : undefined
  if (!forwardTo || forwardTo === ctx.origin) return { params, refusedOrigin: undefined }
  if (originAllowed(forwardTo, ctx.config.redirectProxyAllowedOrigins)) return { status: 302, redirect: `${forward}?${params}` }
  // A sign-in started with a forged Host seals the attacker's origin into the state: the code must not go there.
  return { params, refusedOrigin: forwardTo }
}

/**
 * Verifies the provider's answer: the checks (state, PKCE, nonce), the code exchange (with the ID
 * token's validation for `oidc`), the profile, and `profile()`'s user. Signs nobody in and sets no
 * cookie: the callback action does that with the result.
 * @throws InvalidCheckError, OAuthCallbackError, CallbackRouteError
 */
export async function verifyCallback(ctx: CallbackRequest, provider: OAuthProvider, steps: CallbackSteps, route: { params: URLSearchParams; refusedOrigin: string | undefined }): Promise<VerifiedSignIn> {
  const { params } = route
  if (route.refusedOrigin) throw refusedForward(route.refusedOrigin)
  if (params.has('error')) throw providerError(provider, params)
  const checks = verifyChecks(ctx, provider, params)
  const configuration = await clientConfiguration(provider)
  const currentUrl = new URL(redirectUri(ctx, provider))
  for (const [key, value] of params) currentUrl.searchParams.append(key, value)
  // Without a configured issuer there is nothing to compare `iss` with (RFC 9207).
  if (!hasIssuer(configuration)) currentUrl.searchParams.delete('iss')

  let tokens: Tokens
  let profile: Profile
  try {
    tokens = provider.token.request
      ? await requestedTokens(provider, params, checks.codeVerifier, redirectUri(ctx, provider))
      : await oidc.authorizationCodeGrant(
          configuration,
          currentUrl,
          { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: steps.idTokenExpected },
          provider.token.params,
        )
    profile = await steps.profile({ configuration, provider, tokens, params })
  } catch (error) {
    throw exchangeError(provider, error)
  }
  const tokenSet = tokenSetOf(tokens, ctx.now)
  const user = withVerifiedEmail(ctx, provider, await userOf(provider, profile, tokenSet))
  const account: Account = { ...tokenSet, provider: provider.id, type: provider.type, providerAccountId: user.id }
  return { provider, user, account, profile }
}

function refusedForward(origin: string): InvalidCheckError {
  return new InvalidCheckError(
    'state',
    'state_origin_refused',
    `The redirect proxy did not forward the callback to ${logValue(origin)}: that origin is neither this deployment's nor in redirectProxy.allowedOrigins. If it is one of your deployments, add it (or a pattern such as https://*.preview.example) to redirectProxy.allowedOrigins or AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS on this deployment.`,
  )
}

/**
 * The profile from a custom `userinfo.request` (APIs that are not standard).
 * @throws OAuthCallbackError when it throws or returns something that is not an object.
 */
export async function requestedProfile({ provider, tokens, params }: ProfileInput): Promise<Profile> {
  const userinfo = provider.userinfo || undefined
  let profile: unknown
  try {
    profile = await userinfo!.request!({
      tokens: tokenSetOf(tokens),
      provider: { id: provider.id, clientId: provider.clientId, userinfoUrl: userinfo!.url },
      // A copy: one provider's request cannot change what the rest of the callback sees.
      params: new URLSearchParams(params),
    })
  } catch (error) {
    throw new OAuthCallbackError('userinfo_failed', `userinfo.request of the "${provider.id}" provider failed: ${describeError(error)}`, { cause: redactError(error) })
  }
  if (!profile || typeof profile !== 'object') throw new OAuthCallbackError('userinfo_failed', `userinfo.request of the "${provider.id}" provider returned no profile object.`)
  return profile as Profile
}

/**
 * The token set from a custom `token.request` (`oauth` providers whose exchange is not standard, such
 * as a Passport strategy's). The checks are verified already; the answer must carry an access token.
 * @throws OAuthCallbackError when there is no code, or the request throws or answers without a token.
 */
async function requestedTokens(provider: OAuthProvider, params: URLSearchParams, codeVerifier: string | undefined, redirectUri: string): Promise<Tokens> {
  const code = params.get('code')
  if (!code) throw new OAuthCallbackError('code_missing', `The "${provider.id}" callback has no code parameter.`)
  let tokens: TokenSet
  try {
    // A copy, as for userinfo.request: the provider's function cannot change what the callback sees.
    tokens = await provider.token.request!({ code, redirectUri, codeVerifier, params: new URLSearchParams(params), provider: { id: provider.id, clientId: provider.clientId, tokenUrl: provider.token.url } })
  } catch (error) {
    throw new OAuthCallbackError('token_request_failed', `token.request of the "${provider.id}" provider failed: ${describeError(error)}`, { cause: redactError(error) })
  }
  if (!tokens || typeof tokens !== 'object' || typeof tokens.access_token !== 'string' || !tokens.access_token) {
    throw new OAuthCallbackError('token_request_failed', `token.request of the "${provider.id}" provider returned no access_token.`)
  }
  const tokenType = typeof tokens.token_type === 'string' ? tokens.token_type.toLowerCase() : 'bearer'
  // The shape openid-client's exchange returns; a custom exchange has no validated ID token.
  return { ...tokens, access_token: tokens.access_token, token_type: tokenType as Lowercase<string>, claims: () => undefined, expiresIn: () => tokens.expires_in } as Tokens
}

function responseParams(ctx: CallbackRequest): URLSearchParams {
  if (ctx.method === 'GET') return ctx.query
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(ctx.body)) if (typeof value === 'string') params.append(key, value)
  return params
}

/** The token response's fields (no helpers), with `expires_at` from `expires_in`. */
function tokenSetOf(tokens: Tokens, now = Math.floor(Date.now() / 1000)): TokenSet {
  const tokenSet: TokenSet = { ...tokens }
  if (typeof tokens.expires_in === 'number') tokenSet.expires_at = now + tokens.expires_in
  return tokenSet
}

const warnedUnmarked = new WeakSet<OAuthProvider>()

/**
 * The user with its address only when the provider said the address is verified (`emailVerified:
 * true` from `profile()`). An address anyone can type into their IdP account proves nothing: kept,
 * it would land on a new user that the address's real owner later enters by e-mail link, while the
 * IdP account stays linked (pre-account takeover), or link to the owner's user. Dropped here, once,
 * it reaches neither the session, nor the user lookup, nor linking, nor the user record.
 */
function withVerifiedEmail(ctx: CallbackRequest, provider: OAuthProvider, user: User & { id: string }): User & { id: string } {
  const { emailVerified, ...rest } = user
  const verified = emailVerified === true || emailVerified instanceof Date
  if (typeof rest.email !== 'string' || rest.email === '' || verified) return { ...rest, email: verified && rest.email ? rest.email : null }
  if (emailVerified === undefined && !warnedUnmarked.has(provider)) {
    warnedUnmarked.add(provider)
    ctx.config.logger.warn(
      'UnverifiedEmailIgnored',
      `profile() of the "${provider.id}" provider returned an e-mail address without emailVerified: true, so the address is not used. Return emailVerified: true from profile() when the provider has verified the address (e.g. its email_verified claim).`,
    )
  } else ctx.config.logger.debug('UnverifiedEmailIgnored', `The "${provider.id}" provider did not mark the address verified; it is not used.`)
  return { ...rest, email: null }
}

/** `profile(profile, tokens)` → the user; `id` (the provider account id) is required. */
async function userOf(provider: OAuthProvider, profile: Profile, tokens: TokenSet): Promise<User & { id: string }> {
  let user: User | null | undefined
  try {
    user = await provider.profile(profile, tokens)
  } catch (error) {
    throw new CallbackRouteError(`profile() of the "${provider.id}" provider threw: ${describeError(error)}`, { cause: redactError(error) })
  }
  if (!user || typeof user !== 'object' || user.id === undefined || user.id === null || user.id === '') {
    throw new CallbackRouteError(`profile() of the "${provider.id}" provider returned no id: it becomes the account's providerAccountId, so return the provider's stable user id.`)
  }
  return { ...user, id: String(user.id) }
}

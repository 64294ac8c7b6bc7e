/**
 * The start of an OAuth sign-in: the authorization URL the browser is sent to, and the check
 * cookies that the callback will verify. Used by POST /signin/:provider and the server-side
 * `signIn(provider, options, authorizationParams)`.
 *
 * @see spec/auth-library-spec.md §4.4 (authorizationParams)
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 */
import * as oidc from 'openid-client'
import type { OutgoingCookie } from '../../session/cookies.js'
import type { SessionRequest } from '../../session/types.js'
import { startChecks } from './checks.js'
import { clientConfiguration } from './client.js'
import type { OAuthProvider } from './provider.js'

/** The four shapes spec §4.4 accepts, as `URLSearchParams` takes them. */
export type AuthorizationParams = string | string[][] | Record<string, string> | URLSearchParams

// Set by the flow itself: a caller's value would break the checks or send the code elsewhere.
const RESERVED = new Set(['client_id', 'redirect_uri', 'response_type', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'request', 'request_uri'])

/** Where the site is: its origin and the router's mount path. */
export interface SiteLocation {
  readonly origin: string
  readonly basePath: string
}

type AuthorizeContext = SessionRequest & SiteLocation

/**
 * The provider's authorization URL for this request, and the check cookies to set.
 *
 * @param authorizationParams Extra parameters (e.g. `{ prompt: 'login' }`), after the provider's own.
 * @throws OAuthSignInError when the provider's configuration cannot be discovered.
 */
export async function authorizationRequest(
  ctx: AuthorizeContext,
  provider: OAuthProvider,
  authorizationParams?: AuthorizationParams,
): Promise<{ url: string; cookies: OutgoingCookie[] }> {
  const configuration = await clientConfiguration(provider)
  const params = new URLSearchParams()
  if (provider.type === 'oidc') params.set('scope', 'openid profile email')
  for (const [key, value] of Object.entries(provider.authorization.params)) params.set(key, value)
  if (authorizationParams !== undefined) {
    for (const [key, value] of new URLSearchParams(authorizationParams)) {
      if (RESERVED.has(key)) ctx.config.logger.warn('AuthorizationParamIgnored', `authorizationParams.${key} is set by the sign-in flow and was ignored.`)
      else params.set(key, value)
    }
  }
  const checks = startChecks(ctx, provider, callbackUrl(ctx, provider))
  params.set('redirect_uri', redirectUri(ctx, provider))
  params.set('response_type', 'code')
  for (const [key, value] of Object.entries(checks.params)) params.set(key, value)
  return { url: oidc.buildAuthorizationUrl(configuration, params).href, cookies: checks.cookies }
}

/** The `redirect_uri` registered with the provider: this deployment's callback, or the redirect proxy's. */
export function redirectUri(ctx: SiteLocation, provider: OAuthProvider): string {
  return provider.redirectProxyUrl ? `${provider.redirectProxyUrl}/callback/${provider.id}` : callbackUrl(ctx, provider)
}

/** This deployment's own callback route for `provider`. */
export function callbackUrl(ctx: SiteLocation, provider: OAuthProvider): string {
  return `${ctx.origin}${ctx.basePath}/callback/${provider.id}`
}

/**
 * GET, POST /callback/:provider for OAuth 2 and OpenID Connect providers: the plain OAuth path
 * (userinfo) or the OIDC one (ID token), each loaded on its first callback. A POST here is the
 * provider's `response_mode=form_post`: it carries the state and PKCE checks, not a CSRF token.
 */
import type { ActionContext } from '../../../actions/context.js'
import type { AuthResponse } from '../../../http/respond.js'
import type { OAuthProvider } from '../provider.js'

export async function oauthProviderCallback(ctx: ActionContext, provider: OAuthProvider): Promise<AuthResponse> {
  if (provider.type === 'oidc') return (await (oidcModule ??= import('./oidc-callback.js'))).oidcCallback(ctx, provider)
  return (await (oauthModule ??= import('./oauth-callback.js'))).oauthCallback(ctx, provider)
}

// Imported once, on first use; kept so later callbacks skip the loader (costly under tsx).
let oauthModule: Promise<typeof import('./oauth-callback.js')> | undefined
let oidcModule: Promise<typeof import('./oidc-callback.js')> | undefined

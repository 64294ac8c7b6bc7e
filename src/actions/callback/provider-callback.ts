/**
 * GET/POST /callback/:provider for OAuth 2 and OIDC providers, the action's half: route the
 * callback, have the engine verify it (oauth/callback.ts), then sign in with the verified result
 * (provider-sign-in.ts). The check cookies are cleared on every answer but a forward: each check is
 * single use, whatever the outcome.
 */
import type { OAuthProvider } from '../../config/oauth-provider.js'
import type { AuthResponse } from '../../http/respond.js'
import { routeCallback, verifyCallback, type CallbackSteps } from '../../oauth/callback.js'
import { clearChecks } from '../../security/checks.js'
import type { ActionContext } from '../context.js'
import { failureResponse } from '../failure.js'
import { completeProviderSignIn } from './provider-sign-in.js'

/** Runs an OAuth or OIDC callback, the profile obtained as `steps` say (oauth.ts, oidc.ts). */
export async function providerCallback(ctx: ActionContext, provider: OAuthProvider, steps: CallbackSteps): Promise<AuthResponse> {
  const route = routeCallback(ctx, provider)
  if ('redirect' in route) return { status: route.status, redirect: route.redirect }
  const cleared = clearChecks(ctx)
  let response: AuthResponse
  try {
    response = await completeProviderSignIn(ctx, await verifyCallback(ctx, provider, steps, route))
  } catch (error) {
    response = failureResponse(error, ctx)
  }
  return { ...response, cookies: [...cleared, ...(response.cookies ?? [])] }
}

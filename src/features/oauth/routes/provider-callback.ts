/**
 * GET/POST /callback/:provider for OAuth 2 and OIDC providers, the action's half: route the
 * callback, have the engine verify it (features/oauth/callback.ts), then sign in with the verified result
 * (provider-sign-in.ts). The check cookies are cleared on every answer but a forward: each check is
 * single use, whatever the outcome.
 */
import type { OAuthProvider } from '../provider.js'
import type { AuthResponse } from '../../../http/respond.js'
import { routeCallback, verifyCallback, type CallbackSteps } from '../callback.js'
import { clearChecks } from '../checks.js'
import type { ActionContext } from '../../../actions/context.js'
import { failureResponse } from '../../../actions/failure.js'
import { completeProviderSignIn } from '../complete-sign-in.js'

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

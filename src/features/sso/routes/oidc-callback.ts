/**
 * GET/POST /callback/<sso id>: the end of a sign-in through an OpenID Connect connection. The
 * sign-in cookie names the connection; the OAuth engine verifies the answer against that connection's
 * issuer (state, PKCE, nonce, the ID token's signature, `iss` and `aud`), so an answer of another
 * organization's identity provider, or one meant for another browser, is refused. The checks and the
 * sign-in cookie are cleared whatever the outcome: each is used once.
 */
import type { ActionContext } from '../../../actions/context.js'
import { failureResponse } from '../../../actions/failure.js'
import type { AuthResponse } from '../../../http/respond.js'
import { routeCallback, verifyCallback } from '../../oauth/callback.js'
import { clearChecks } from '../../oauth/checks.js'
import { InvalidCheckError } from '../../oauth/errors.js'
import { idTokenProfile } from '../../oauth/routes/oidc-callback.js'
import { ssoAdapter } from '../adapter.js'
import { completeSsoSignIn } from '../complete.js'
import type { SsoProvider } from '../config.js'
import { isOidc, oidcProviderOf } from '../connection.js'
import { clearSignInState, readSignInState } from '../sign-in-state.js'

export async function ssoOidcCallback(ctx: ActionContext, sso: SsoProvider): Promise<AuthResponse> {
  const state = readSignInState(ctx)
  const connection = state?.type === 'oidc' ? await ssoAdapter(ctx.config).getSsoConnection(state.connectionId) : null
  let response: AuthResponse
  if (connection && isOidc(connection)) {
    const provider = oidcProviderOf(ctx.config, sso, connection)
    const route = routeCallback(ctx, provider)
    // A form_post answer comes back as a same-site GET first, its cookies then with it.
    if ('redirect' in route) return { status: route.status, redirect: route.redirect }
    try {
      if (!connection.enabled) throw new InvalidCheckError('state', 'sso_connection_disabled', `SSO connection ${connection.id} was disabled during the sign-in.`)
      const verified = await verifyCallback(ctx, provider, { idTokenExpected: true, profile: idTokenProfile }, route)
      const subject = verified.account.providerAccountId.slice(connection.id.length + 1)
      response = await completeSsoSignIn(ctx, sso, connection, {
        subject,
        email: verified.user.email ?? null,
        name: verified.user.name ?? null,
        image: verified.user.image ?? null,
        profile: verified.profile,
      })
    } catch (error) {
      response = failureResponse(error, ctx)
    }
  } else {
    response = failureResponse(new InvalidCheckError('state', 'sso_cookie_missing', 'The SSO sign-in cookie was missing, expired or named no OIDC connection: the sign-in was started in another browser, more than 10 minutes ago, or the connection was removed.'), ctx)
  }
  return { ...response, cookies: [...clearChecks(ctx), ...clearSignInState(ctx), ...(response.cookies ?? [])] }
}

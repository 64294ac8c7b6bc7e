/**
 * POST /signin/<sso id> (and `signIn('sso', { email })`): home-realm discovery and the redirect to
 * the organization's identity provider. The address's verified domain names the organization, its
 * enabled connection the identity provider; the sign-in cookie remembers which connection (and the
 * SAML request's id), so that the answer is taken only from it, in this browser.
 *
 * @see https://docs.oasis-open.org/security/saml/v2.0/saml-bindings-2.0-os.pdf §3.4 (HTTP Redirect binding)
 */
import type { ActionContext } from '../../actions/context.js'
import type { SignInStart } from '../../composition/index.js'
import type { AuthResponse } from '../../http/respond.js'
import { authorizationRequest } from '../oauth/authorize.js'
import type { SsoProvider } from './config.js'
import { acsUrl, isOidc, isSaml, oidcProviderOf, spEntityId } from './connection.js'
import { connectionForAddress } from './discovery.js'
import { SsoError } from './errors.js'
import { signInStateCookie } from './sign-in-state.js'

/** Starts the sign-in. @throws SsoError `no_connection` when no connection serves the address. */
export async function startSsoSignIn(ctx: ActionContext, sso: SsoProvider, { fields }: SignInStart): Promise<AuthResponse> {
  const email = typeof fields.email === 'string' ? fields.email.trim() : ''
  const connection = email.length <= 320 ? await connectionForAddress(ctx.config, email) : null
  if (!connection) throw new SsoError('no_connection', 'No enabled SSO connection serves this address\'s domain (or the domain is not verified).')
  if (isOidc(connection)) {
    const provider = oidcProviderOf(ctx.config, sso, connection)
    const { url, cookies } = await authorizationRequest(ctx, provider, { login_hint: email })
    return { redirect: url, cookies: [...cookies, signInStateCookie(ctx, { connectionId: connection.id, type: 'oidc' })] }
  }
  if (!isSaml(connection)) throw new SsoError('invalid_input', `Connection ${connection.id} has an unknown type.`)
  const { authnRequestUrl } = await import('./saml/index.js')
  const { settings } = connection
  const { url, requestId } = await authnRequestUrl(
    { entityId: settings.idpEntityId, ssoUrl: settings.ssoUrl, certificates: settings.certificates },
    { entityId: spEntityId(ctx, connection.id), acsUrl: acsUrl(ctx, connection.id) },
    // No RelayState: where to go after the sign-in is this site's own callback URL cookie, and the ACS
    // ignores a RelayState that comes back with an answer to a request of ours.
    '',
  )
  return { redirect: url, cookies: [signInStateCookie(ctx, { connectionId: connection.id, type: 'saml', requestId })] }
}

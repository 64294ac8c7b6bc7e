/**
 * What the SSO wing's server-side functions share: the request they are called on, the CSRF rule of
 * the ones that change something, the SSO provider (configured, or the call says how to), the
 * signed-in caller as the organizations wing checks them, and the engine, imported on first use.
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { UnknownActionError } from '../../../errors.js'
import { callerOf, type Caller } from '../../organizations/call.js'
import { ssoProviderOf, type SsoProvider } from '../config.js'

/** The request, or `{ req, res }`. */
export type SsoCallContext = SessionsCallContext

let engine: Promise<typeof import('../manage.js')> | undefined

/** The engine, imported on first use. */
export function loadManage(): Promise<typeof import('../manage.js')> {
  return (engine ??= import('../manage.js'))
}

/** The configured SSO provider. @throws UnknownActionError when there is none. */
export function ssoOf(config: ResolvedConfig, what: string): SsoProvider {
  const sso = ssoProviderOf(config)
  if (!sso) throw new UnknownActionError(`${what}: single sign-on is off. Add SSO() from portcullis/providers/sso to the providers (with the organizations option and the SSO migration). See docs/sso.md.`)
  return sso
}

/**
 * The call on `given` for the user signed in by its cookie session.
 * @param csrf Check the CSRF token (the functions that change something) with these options.
 * @throws TypeError, UnknownActionError (no SSO provider), InvalidConfigurationError (organizations off), MissingCSRFError, OrganizationError `not_signed_in`
 */
export async function ssoCall(api: Api, given: unknown, what: string, csrf?: CsrfOptions): Promise<{ caller: Caller; sso: SsoProvider; manage: Awaited<ReturnType<typeof loadManage>> }> {
  const { req } = givenRequest(given, what)
  const sso = ssoOf(api.config, what)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  return { caller: await callerOf(ctx, what), sso, manage: await loadManage() }
}

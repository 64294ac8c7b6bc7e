/**
 * What the authorization server's server-side functions share: the check that the option is on,
 * and, for the user's own apps, the request they are called on with its signed-in user (a cookie
 * session: an access token cannot remove apps).
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { UnknownActionError } from '../../../errors.js'
import { signedInUserId } from '../../../session/strategy.js'
import { authorizationServerOf } from '../config.js'
import { AuthorizationServerError } from '../errors.js'

/** The request, or `{ req, res }`. */
export type AuthorizationServerCallContext = SessionsCallContext

/** @throws UnknownActionError when `authorizationServer` is off. */
export function assertAuthorizationServer(config: ResolvedConfig, what: string): void {
  if (!authorizationServerOf(config)) throw new UnknownActionError(`${what}: the authorization server is off. Set the authorizationServer option (and run its migration) to use it.`)
}

/**
 * The user signed in by the cookie session of `given`.
 * @throws TypeError, UnknownActionError, MissingCSRFError, AuthorizationServerError `not_signed_in`
 */
export async function signedInCall(api: Api, given: unknown, what: string, csrf?: CsrfOptions): Promise<{ userId: string }> {
  const { req } = givenRequest(given, what)
  assertAuthorizationServer(api.config, what)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  const userId = await signedInUserId(ctx)
  if (!userId) throw new AuthorizationServerError('not_signed_in', `${what}: nobody is signed in on this request (a cookie session is needed).`)
  return { userId }
}

/**
 * What the API keys' server-side functions share: the request they are called on, the check that
 * `apiKeys` is on, the CSRF rule of the ones that change keys, and the user, signed in by a cookie
 * session: a key cannot create, rotate or revoke keys (a leaked key must not mint itself successors).
 */
import type { ActionContext } from '../../../actions/context.js'
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { UnknownActionError } from '../../../errors.js'
import { signedInUserId } from '../../../session/strategy.js'
import { apiKeysOf } from '../config.js'
import { ApiKeyError } from '../errors.js'

/** The request, or `{ req, res }`. */
export type ApiKeysCallContext = SessionsCallContext

/** @throws UnknownActionError when `apiKeys` is off. */
export function assertApiKeys(config: ResolvedConfig, what: string): void {
  if (!apiKeysOf(config)) throw new UnknownActionError(`${what}: API keys are off. Set the apiKeys option (and run the eighth migration) to use them.`)
}

let manage: Promise<typeof import('../manage.js')> | undefined

/** The management code, imported on first use. */
export function loadManage(): Promise<typeof import('../manage.js')> {
  return (manage ??= import('../manage.js'))
}

/**
 * The call on `given` for the user signed in by its cookie session.
 * @param csrf Check the CSRF token (the functions that change keys) with these options.
 * @throws TypeError, UnknownActionError, MissingCSRFError, ApiKeyError `not_signed_in`
 */
export async function apiKeyCall(api: Api, given: unknown, what: string, csrf?: CsrfOptions): Promise<{ ctx: ActionContext; userId: string; manage: Awaited<ReturnType<typeof loadManage>> }> {
  const { req } = givenRequest(given, what)
  assertApiKeys(api.config, what)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  const userId = await signedInUserId(ctx)
  if (!userId) throw new ApiKeyError('not_signed_in', `${what}: nobody is signed in on this request (a cookie session is needed: an API key cannot manage keys).`)
  return { ctx, userId, manage: await loadManage() }
}

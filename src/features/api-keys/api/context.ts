/**
 * What the API keys' server-side functions share: the request they are called on, the check that
 * `apiKeys` is on, the CSRF rule of the ones that change keys, the user, signed in by a cookie
 * session (a key cannot create, rotate or revoke keys: a leaked key must not mint itself
 * successors), and the owner of the keys: the user, or an organization they may manage.
 */
import type { ActionContext } from '../../../actions/context.js'
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { UnknownActionError } from '../../../errors.js'
import { signedInUserId } from '../../../session/strategy.js'
import { hooksOf } from '../../../composition/index.js'
import { apiKeysOf } from '../config.js'
import { ApiKeyError } from '../errors.js'
import { userOwner } from '../owner.js'
import type { ApiKeyOwner } from '../types.js'

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

/** Whose keys a call manages: the signed-in user's (default), or an organization's they may manage. */
export interface ApiKeyOwnerOption {
  /**
   * The organization whose keys these are (the `organizations` option): the signed-in user's roles
   * there must grant `apiKey: ['manage']` (owners and admins). Default: the user's own keys.
   */
  organizationId?: string | undefined
}

/**
 * The call on `given` for the user signed in by its cookie session, and the owner of the keys it manages.
 * @param csrf Check the CSRF token (the functions that change keys) with these options.
 * @throws TypeError, UnknownActionError, MissingCSRFError, ApiKeyError `not_signed_in`, `not_found` (an organization not theirs to manage)
 */
export async function apiKeyCall(
  api: Api,
  given: unknown,
  what: string,
  csrf?: CsrfOptions,
  ownerOption?: ApiKeyOwnerOption,
): Promise<{ ctx: ActionContext; userId: string; owner: ApiKeyOwner; manage: Awaited<ReturnType<typeof loadManage>> }> {
  const { req } = givenRequest(given, what)
  assertApiKeys(api.config, what)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  const userId = await signedInUserId(ctx)
  if (!userId) throw new ApiKeyError('not_signed_in', `${what}: nobody is signed in on this request (a cookie session is needed: an API key cannot manage keys).`)
  return { ctx, userId, owner: await keyOwner(api.config, userId, ownerOption?.organizationId), manage: await loadManage() }
}

/**
 * The owner of the keys `userId` manages: themselves, or the organization `organizationId` when a
 * feature's owner type (`FeatureHooks.credentialOwner`) says they may manage its keys.
 * @throws ApiKeyError `invalid_input` (organizations off), `not_found` (not a member, or roles that do not allow it: the same answer)
 */
export async function keyOwner(config: ResolvedConfig, userId: string, organizationId: unknown): Promise<ApiKeyOwner> {
  if (organizationId === undefined || organizationId === '') return userOwner(userId)
  if (typeof organizationId !== 'string' || organizationId.length > 255) throw new ApiKeyError('invalid_input', 'organizationId must be the id of an organization.')
  const type = hooksOf(config, 'credentialOwner').find((owner) => owner.type === 'organization')
  if (!type) throw new ApiKeyError('invalid_input', 'Keys of an organization need the organizations option.')
  if (!(await type.mayManage(config, userId, organizationId))) throw new ApiKeyError('not_found', 'No organization of yours whose API keys you may manage has this id.')
  return { type: 'organization', id: organizationId }
}

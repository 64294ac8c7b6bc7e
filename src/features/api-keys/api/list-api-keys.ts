/** The server-side `listApiKeys(req)`. */
import type { Api } from '../../../api/context.js'
import type { ApiKeyInfo } from '../types.js'
import { apiKeyCall, type ApiKeyOwnerOption, type ApiKeysCallContext } from './context.js'

/**
 * The signed-in user's API keys (or, with `organizationId`, an organization's they may manage), newest first, revoked and expired ones included until pruned: each
 * with its display part (`pc_live_AbCd…wXyZ`), never the key.
 *
 * @throws ApiKeyError `not_signed_in`; UnknownActionError (`apiKeys` off)
 * @example
 * ```ts
 * app.get('/account/keys', async (req, res) => res.json(await listApiKeys(req)))
 * ```
 */
export type ListApiKeysFunction = (req: ApiKeysCallContext, options?: ApiKeyOwnerOption) => Promise<ApiKeyInfo[]>

export function createListApiKeys(api: Api): ListApiKeysFunction {
  return async (given, options) => {
    const { owner, manage } = await apiKeyCall(api, given, 'listApiKeys()', undefined, options)
    return manage.listKeys(api.config, owner)
  }
}

/** The server-side `listApiKeys(req)`. */
import type { Api } from '../../../api/context.js'
import type { ApiKeyInfo } from '../types.js'
import { apiKeyCall, type ApiKeysCallContext } from './context.js'

/**
 * The signed-in user's API keys, newest first, revoked and expired ones included until pruned: each
 * with its display part (`pc_live_AbCd…wXyZ`), never the key.
 *
 * @throws ApiKeyError `not_signed_in`; UnknownActionError (`apiKeys` off)
 * @example
 * ```ts
 * app.get('/account/keys', async (req, res) => res.json(await listApiKeys(req)))
 * ```
 */
export type ListApiKeysFunction = (req: ApiKeysCallContext) => Promise<ApiKeyInfo[]>

export function createListApiKeys(api: Api): ListApiKeysFunction {
  return async (given) => {
    const { userId, manage } = await apiKeyCall(api, given, 'listApiKeys()')
    return manage.listKeys(api.config, userId)
  }
}

/** The server-side `revokeApiKey(req, id)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { apiKeyCall, type ApiKeyOwnerOption, type ApiKeysCallContext } from './context.js'

/**
 * Revokes one of the signed-in user's API keys (or of the organization `organizationId`): refused at once by this process, by the others
 * within `apiKeys.cacheSeconds` (default 5). CSRF-checked.
 *
 * @throws ApiKeyError `not_signed_in`, `not_found`; MissingCSRFError; UnknownActionError (`apiKeys` off)
 * @example
 * ```ts
 * app.post('/account/keys/:id/revoke', async (req, res) => {
 *   await revokeApiKey(req, String(req.params.id), { csrfToken: String(req.body.csrfToken) })
 *   res.redirect('/account/keys')
 * })
 * ```
 */
export type RevokeApiKeyFunction = (req: ApiKeysCallContext, id: string, options?: CsrfOptions & ApiKeyOwnerOption) => Promise<void>

export function createRevokeApiKey(api: Api): RevokeApiKeyFunction {
  return async (given, id, options = {}) => {
    const { userId, owner, manage } = await apiKeyCall(api, given, 'revokeApiKey()', options, options)
    await manage.revokeKey(api.config, userId, id, owner)
  }
}

/** The server-side `rotateApiKey(req, id, { gracePeriod })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { CreatedApiKey } from '../types.js'
import { apiKeyCall, type ApiKeyOwnerOption, type ApiKeysCallContext } from './context.js'

/** What `rotateApiKey` takes. */
export interface RotateApiKeyOptions extends CsrfOptions, ApiKeyOwnerOption {
  /** Seconds the old key keeps working, for the deploy that swaps it (0 to 30 days). Default 0: it stops now. */
  gracePeriod?: number | undefined
}

/**
 * Replaces one of the signed-in user's API keys (or of the organization `organizationId`) by a new one with the same name, scopes, metadata,
 * limits and remaining life; the old key expires after `gracePeriod`. Returns the new key once.
 * CSRF-checked.
 *
 * @throws ApiKeyError `not_signed_in`, `not_found`, `invalid_input`; MissingCSRFError; UnknownActionError (`apiKeys` off)
 * @example
 * ```ts
 * const { key } = await rotateApiKey(req, id, { gracePeriod: 3600, csrfToken })
 * ```
 */
export type RotateApiKeyFunction = (req: ApiKeysCallContext, id: string, options?: RotateApiKeyOptions) => Promise<CreatedApiKey>

export function createRotateApiKey(api: Api): RotateApiKeyFunction {
  return async (given, id, options = {}) => {
    const { userId, owner, manage } = await apiKeyCall(api, given, 'rotateApiKey()', options, options)
    return manage.rotateKey(api.config, userId, id, options.gracePeriod ?? 0, owner)
  }
}

/** The server-side `createApiKey(req, { name, scopes, expiresIn, metadata })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { NewApiKey } from '../manage.js'
import type { CreatedApiKey } from '../types.js'
import { apiKeyCall, type ApiKeyOwnerOption, type ApiKeysCallContext } from './context.js'

/** What `createApiKey` takes: the new key's settings, its owner (default the user), and the CSRF token of the form that asked. */
export interface CreateApiKeyOptions extends NewApiKey, CsrfOptions, ApiKeyOwnerOption {}

/**
 * Creates an API key for the signed-in user (or, with `organizationId`, for an organization whose
 * keys they may manage) and returns it once, with its id and display part; only its SHA-256 is stored. CSRF-checked like every call that changes state: pass the form's
 * `csrfToken` (or `skipCsrfCheck` for a call that no browser's form asked for).
 *
 * @throws ApiKeyError `not_signed_in`, `invalid_input`, `too_many_keys`; MissingCSRFError; UnknownActionError (`apiKeys` off)
 * @example
 * ```ts
 * app.post('/account/keys', express.urlencoded({ extended: false }), async (req, res) => {
 *   const { key } = await createApiKey(req, { name: 'CI deploys', scopes: ['deploy'], expiresIn: 90 * 86400 })
 *   res.send(`Copy it now, you will not see it again: ${key}`)
 * })
 * ```
 */
export type CreateApiKeyFunction = (req: ApiKeysCallContext, options: CreateApiKeyOptions) => Promise<CreatedApiKey>

export function createCreateApiKey(api: Api): CreateApiKeyFunction {
  return async (given, options) => {
    const { userId, owner, manage } = await apiKeyCall(api, given, 'createApiKey()', options ?? {}, options)
    return manage.createKey(api.config, userId, options, undefined, owner)
  }
}

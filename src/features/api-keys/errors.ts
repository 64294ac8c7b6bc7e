/** The API keys wing's error (`apiKeys` option). */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    ApiKey: true
  }
}

/**
 * Why an API key call failed:
 * - `not_signed_in`: the call was made on a request with no cookie session (a key cannot manage keys);
 * - `invalid_input`: a name, scope, expiry, limit or metadata that cannot be stored (the message says which);
 * - `not_found`: no key of the signed-in user has this id (or it is revoked or expired already);
 * - `too_many_keys`: the owner has `maxKeysPerOwner` valid keys.
 */
export type ApiKeyErrorCode = 'not_signed_in' | 'invalid_input' | 'not_found' | 'too_many_keys'

/** A failed `createApiKey()`, `revokeApiKey()` or `rotateApiKey()`; see `ApiKeyErrorCode`. */
export class ApiKeyError extends AuthError {
  readonly code: ApiKeyErrorCode

  constructor(code: ApiKeyErrorCode, message: string) {
    super('ApiKey', message)
    this.code = code
  }
}

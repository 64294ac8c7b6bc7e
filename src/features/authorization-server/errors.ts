/** The authorization server wing's error (`authorizationServer` option). */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    AuthorizationServer: true
  }
}

/**
 * Why an authorization server call failed:
 * - `not_signed_in`: the call was made on a request with no cookie session;
 * - `invalid_client_metadata`: `registerOAuthClient()` was given metadata oidc-provider refuses (the message says which);
 * - `client_exists`: a client with this `client_id` is declared or stored already;
 * - `not_found`: no such client, or no such app with access.
 */
export type AuthorizationServerErrorCode = 'not_signed_in' | 'invalid_client_metadata' | 'client_exists' | 'not_found'

/** A failed authorization server call; see `AuthorizationServerErrorCode`. */
export class AuthorizationServerError extends AuthError {
  readonly code: AuthorizationServerErrorCode

  constructor(code: AuthorizationServerErrorCode, message: string) {
    super('AuthorizationServer', message)
    this.code = code
  }
}

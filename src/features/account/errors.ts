/** The account wing's errors. */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    AccountError: true
  }
}

/** Why an account call did nothing: see `AccountError.code`. */
export type AccountErrorCode = 'not_signed_in' | 'not_confirmed' | 'user_not_found' | 'invalid_email' | 'same_email' | 'invalid_link' | 'wrong_code' | 'invalid_code' | 'email_taken'

/**
 * An account call (`deleteAccount()`) did nothing. `code` says why: `not_signed_in` (nobody is
 * signed in on the request); `not_confirmed` (the account page's delete form came without its
 * confirmation box ticked); `user_not_found` (the session's user is gone already); for a change of address, `invalid_email`,
 * `same_email`, `invalid_link` (used, expired, altered, or another user's), `wrong_code` (a wrong code,
 * tries left), `invalid_code` (void after five wrong tries, expired, used, or asked for in another browser or
 * for another address) and `email_taken` (another user took the address meanwhile).
 */
export class AccountError extends AuthError {
  readonly code: AccountErrorCode
  constructor(code: AccountErrorCode, message: string) {
    super('AccountError', message)
    this.code = code
  }
}

/**
 * The password wing's errors, re-exported by the package's entry point; their types join `ErrorTypes`
 * (declaration merging), so src/errors.ts names no feature.
 */
import { AuthError, CredentialsSignin } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    PasswordPolicy: true
    Username: true
  }
}

/**
 * The password was right, but the provider's `requireEmailVerification` is on and the user has not
 * followed the link of their sign-up mail yet: the sign-in page says so and offers to send it again
 * (`?error=CredentialsSignin&code=email_not_verified`). Only a right password gets this answer, so
 * it tells nothing about who has an account.
 */
export class EmailNotVerifiedError extends CredentialsSignin {
  override code = 'email_not_verified'

  constructor(message = 'The password is right, but the address is not verified yet (requireEmailVerification).') {
    super(message)
  }
}

/** Why a new password was refused (`PasswordPolicyError.code`). */
export type PasswordPolicyCode = 'too_short' | 'too_long' | 'common' | 'breached' | 'wrong_password'

/**
 * A new password was refused by the policy (NIST SP 800-63B: too short, too long, a common one, a
 * breached one), or `changePassword()` was given a wrong current password (`wrong_password`). The
 * built-in pages show it on their form; the server-side `signUp()`/`changePassword()` throw it.
 */
export class PasswordPolicyError extends AuthError {
  readonly code: PasswordPolicyCode

  constructor(code: PasswordPolicyCode, message: string) {
    super('PasswordPolicy', message)
    this.code = code
  }

  override get logLevel(): 'error' | 'warn' | 'debug' {
    return 'debug'
  }
}

/** Why a username was refused (`UsernameError.code`). */
export type UsernameErrorCode = 'missing' | 'too_short' | 'too_long' | 'characters' | 'mixed_scripts' | 'reserved' | 'taken'

/**
 * A username was refused: missing while `required`, too short or long, a character the rules do not
 * allow, scripts mixed, a reserved name (or a lookalike of one), or, only when a signed-in user
 * changes theirs, `taken`. A sign-up never gets `taken`: its answer is the same for a free and a
 * taken name (the mail says which). The built-in pages show it on their form; `signUp()` and
 * `changeUsername()` throw it.
 */
export class UsernameError extends AuthError {
  readonly code: UsernameErrorCode

  constructor(code: UsernameErrorCode, message: string) {
    super('Username', message)
    this.code = code
  }

  override get logLevel(): 'error' | 'warn' | 'debug' {
    return 'debug'
  }
}

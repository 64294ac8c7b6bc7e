/**
 * The password wing's errors, re-exported by the package's entry point; their types join `ErrorTypes`
 * (declaration merging), so src/errors.ts names no feature.
 */
import { AuthError, CredentialsSignin } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    PasswordPolicy: true
    Username: true
    PasswordBusy: true
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

/**
 * Too many password hashes are running and waiting in this process (the Password provider's
 * `hashingLimit`): the sign-in, sign-up, reset or change was refused before any work, and before
 * its address was looked up, so the refusal says nothing about who has an account. The routes
 * answer 503 with `Retry-After`; the server-side `signIn('password', …)`, `signUp()` and
 * `changePassword()` throw it.
 */
export class PasswordBusyError extends AuthError {
  /** Seconds after which a place is likely free (at least 1): the `Retry-After` value. */
  readonly retryAfterSeconds: number
  /** 503 Service Unavailable, for `next(error)`: Express's default handler answers it, with `headers`. */
  readonly status = 503
  /** The same as `status`, for the error handlers that read this name. */
  readonly statusCode = 503
  readonly expose = false
  /** `Retry-After`, which Express's default handler (finalhandler) sets from an error's `headers`. */
  readonly headers: Readonly<Record<'Retry-After', string>>

  /** @param retryAfterSeconds Seconds until another attempt is likely to find a place. */
  constructor(retryAfterSeconds: number, message = 'Too many password hashes are running and waiting: try again shortly (the Password provider\'s hashingLimit).') {
    super('PasswordBusy', message)
    this.retryAfterSeconds = retryAfterSeconds
    this.headers = { 'Retry-After': String(retryAfterSeconds) }
  }

  override get logLevel(): 'error' | 'warn' | 'debug' {
    return 'warn'
  }
}

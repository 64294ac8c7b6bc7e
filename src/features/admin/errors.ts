/** The admin wing's error (`admin` option). */
import { AuthError, type ClientErrorCode } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    Admin: true
    UserBanned: true
  }
  interface ClientErrorCodes {
    UserBanned: true
  }
}

/**
 * Why an admin call was refused:
 * - `not_signed_in`: nobody is signed in on the request;
 * - `forbidden`: the caller's roles do not grant the action (`user: ['list']`, `['set-role']`, `['revoke-sessions']`, …);
 * - `own_roles`: an administrator changing their own roles (another administrator must: nobody raises or drops their own);
 * - `not_found`: no such user;
 * - `no_address`: the user has no e-mail address to send a reset link to;
 * - `mail_failed`: the reset link could not be mailed (the transport's error is logged, the link redacted);
 * - `email_taken`: `createUser` or `updateUser` with the address of another user;
 * - `impersonate_admin`: impersonating a user whose roles grant an admin action, without `admin.impersonateAdmins`;
 * - `banned`: impersonating a banned user (no session of theirs starts while the ban holds);
 * - `impersonating`: an admin call in a session that is itself an impersonation (stop it first);
 * - `not_impersonating`: `stopImpersonating` in a session that is no impersonation.
 */
export type AdminErrorCode =
  | 'not_signed_in'
  | 'forbidden'
  | 'own_roles'
  | 'not_found'
  | 'no_address'
  | 'mail_failed'
  | 'email_taken'
  | 'impersonate_admin'
  | 'banned'
  | 'impersonating'
  | 'not_impersonating'

/** A refused admin call; see `AdminErrorCode`. */
export class AdminError extends AuthError {
  readonly code: AdminErrorCode

  constructor(code: AdminErrorCode, message: string) {
    super('Admin', message)
    this.code = code
  }
}

/**
 * A sign-in of a banned user (any method), refused before a session starts: the sign-in page shows
 * `?error=UserBanned`. The ban's reason is the administrators', never in the answer.
 */
export class UserBannedError extends AuthError {
  override readonly kind = 'signIn'

  constructor(message = 'This account is banned.') {
    super('UserBanned', message)
  }

  override get clientCode(): ClientErrorCode {
    return 'UserBanned'
  }
}

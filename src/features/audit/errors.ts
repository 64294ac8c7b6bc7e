/** The audit wing's error (`audit` option). */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    Audit: true
  }
}

/**
 * Why `listAuditEvents()` refused:
 * - `not_signed_in`: nobody is signed in on the request;
 * - `forbidden`: the filter names another user (or every user), and the caller's roles do not grant
 *   `audit: ['read']` (the `roles` option).
 */
export type AuditErrorCode = 'not_signed_in' | 'forbidden'

/** A refused `listAuditEvents()`; see `AuditErrorCode`. */
export class AuditError extends AuthError {
  readonly code: AuditErrorCode

  constructor(code: AuditErrorCode, message: string) {
    super('Audit', message)
    this.code = code
  }
}

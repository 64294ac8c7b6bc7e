/**
 * The OAuth wing's errors, re-exported by the package's entry point; their types join `ErrorTypes`
 * (declaration merging), so src/errors.ts names no feature.
 */
import { AuthError, type ClientErrorCode } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    InvalidCheck: true
    OAuthCallbackError: true
    OAuthSignInError: true
  }

  interface ClientErrorCodes {
    InvalidCheck: true
    OAuthCallbackError: true
    OAuthSignInError: true
  }
}

/**
 * An OAuth sign-in could not start: the provider's discovery document or configuration could not
 * be fetched or used. The user is sent back to the sign-in page; the cause is logged.
 */
export class OAuthSignInError extends AuthError {
  override readonly kind = 'signIn'
  constructor(message: string, options?: { cause?: unknown }) {
    super('OAuthSignInError', message, options)
  }

  override get clientCode(): ClientErrorCode {
    return 'OAuthSignInError'
  }

  override get logLevel(): 'error' {
    return 'error'
  }
}

/**
 * The provider's answer on the callback was an error or did not pass validation: `error=` from the
 * provider, a failed token exchange, an ID token with a bad signature, issuer, audience, expiry or
 * nonce, an `iss` mix-up, an unusable profile. `code` is a short, fixed identifier safe to show
 * (`access_denied`, `invalid_grant`, `id_token_invalid`, …); the detail is logged, never a token.
 */
export class OAuthCallbackError extends AuthError {
  override readonly kind = 'signIn'
  /** Shown to the client as `?code=`. */
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super('OAuthCallbackError', message, options)
    this.code = code
  }

  override get signInCode(): string | undefined {
    return this.code
  }

  override get clientCode(): ClientErrorCode {
    return 'OAuthCallbackError'
  }

  override get logLevel(): 'warn' {
    return 'warn'
  }
}

/** The checks of an OAuth flow (state, PKCE, nonce). */
export type OAuthCheck = 'pkce' | 'state' | 'nonce'

/**
 * A check of an OAuth callback failed: its cookie was missing, expired, from another provider's
 * flow, or did not match. `code` names the check and what went wrong (`state_cookie_missing`,
 * `state_mismatch`, `pkce_cookie_missing`, …), and the log line names the cookie and the usual
 * causes, so "state mismatch" is never the whole story.
 */
export class InvalidCheckError extends AuthError {
  override readonly kind = 'signIn'
  readonly check: OAuthCheck
  /** Shown to the client as `?code=`. */
  readonly code: string

  constructor(check: OAuthCheck, code: string, message: string) {
    super('InvalidCheck', message)
    this.check = check
    this.code = code
  }

  override get signInCode(): string | undefined {
    return this.code
  }

  override get clientCode(): ClientErrorCode {
    return 'InvalidCheck'
  }

  override get logLevel(): 'warn' {
    return 'warn'
  }
}

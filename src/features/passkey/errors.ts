/**
 * The passkey wing's errors, re-exported by the package's entry point; their types join `ErrorTypes`
 * (declaration merging), so src/errors.ts names no feature.
 */
import { AuthError, type ClientErrorCode } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    WebAuthnVerificationError: true
  }

  interface ClientErrorCodes {
    WebAuthnVerificationError: true
  }
}

/** Why a passkey response was refused: see `WebAuthnVerificationError.code`. */
export type WebAuthnVerificationCode =
  | 'challenge_missing'
  | 'challenge_invalid'
  | 'challenge_mismatch'
  | 'challenge_used'
  | 'response_invalid'
  | 'unknown_credential'
  | 'credential_exists'
  | 'origin_mismatch'
  | 'counter_replayed'
  | 'counter_conflict'
  | 'not_signed_in'
  | 'verification_failed'

/**
 * A passkey sign-in or registration was refused. `code` (also the page's `?code=`) says why:
 * - `challenge_missing`, `challenge_invalid`: the `authjs.challenge` cookie did not come back, or had
 *   expired (5 minutes) or was sealed with another secret: start again.
 * - `challenge_mismatch`: the response signs another challenge than this browser's cookie holds (a
 *   response made in another browser or tab), or the cookie was issued for the other action.
 * - `challenge_used`: the challenge was used already (a replayed response); each is good once.
 * - `response_invalid`: the posted `data` is not a WebAuthn response.
 * - `unknown_credential`: no stored passkey has the response's credential id (removed, or of another site).
 * - `credential_exists`: a registration of a passkey that is registered already.
 * - `origin_mismatch`: the browser signed for another origin than the configured one(s).
 * - `counter_replayed`: the authenticator's signature counter did not go up: a cloned authenticator.
 * - `counter_conflict`: another sign-in with the same passkey stored its counter at the same moment.
 * - `not_signed_in`: a registration from a browser that is not signed in (as the user the challenge was for).
 * - `verification_failed`: `@simplewebauthn/server` refused it (signature, RP ID, user verification); the log says why.
 */
export class WebAuthnVerificationError extends AuthError {
  override readonly kind = 'signIn'
  /** Shown to the client as `?code=`. */
  readonly code: WebAuthnVerificationCode

  constructor(code: WebAuthnVerificationCode, message: string, options?: { cause?: unknown }) {
    super('WebAuthnVerificationError', message, options)
    this.code = code
  }

  override get signInCode(): string | undefined {
    return this.code
  }

  override get clientCode(): ClientErrorCode {
    return 'WebAuthnVerificationError'
  }

  // A cloned authenticator or a replayed response is an attack an operator wants to see.
  override get logLevel(): 'warn' | 'debug' {
    return this.code === 'counter_replayed' || this.code === 'challenge_used' || this.code === 'origin_mismatch' ? 'warn' : 'debug'
  }
}

/** The SSO wing's errors (the `SSO` provider): a connection's management, and a sign-in through one. */
import { AuthError, type ClientErrorCode } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    SSO: true
    SamlResponse: true
  }
  interface ClientErrorCodes {
    SSO: true
    SamlResponse: true
  }
}

// The codes a sign-in meets: the sign-in page says them; the others are a management call's.
const SIGN_IN_CODES: ReadonlySet<SsoErrorCode> = new Set(['no_connection', 'sso_required', 'address_outside_domains'])

/**
 * Why an SSO call failed:
 * - `invalid_input`: a field that cannot be used (the message says which);
 * - `not_found`: no connection or domain of this id that the caller may see;
 * - `forbidden`: the caller's roles in the organization do not grant the action;
 * - `domain_taken`: another organization has claimed this domain;
 * - `domain_unverified`: the DNS record was not found (or says something else);
 * - `invalid_metadata`: an IdP's metadata or discovery document cannot be fetched or read;
 * - `no_connection`: no enabled connection serves this address's domain;
 * - `sso_required`: the user's organization signs its members in only through its own identity provider;
 * - `address_outside_domains`: the identity provider answered an address outside the organization's verified domains.
 */
export type SsoErrorCode = 'invalid_input' | 'not_found' | 'forbidden' | 'domain_taken' | 'domain_unverified' | 'invalid_metadata' | 'no_connection' | 'sso_required' | 'address_outside_domains'

/** A failed SSO call; see `SsoErrorCode`. */
export class SsoError extends AuthError {
  override readonly kind: 'signIn' | 'error'
  readonly code: SsoErrorCode

  constructor(code: SsoErrorCode, message: string, options?: { cause?: unknown }) {
    super('SSO', message, options)
    this.code = code
    this.kind = SIGN_IN_CODES.has(code) ? 'signIn' : 'error'
  }

  override get clientCode(): ClientErrorCode {
    return this.kind === 'signIn' ? 'SSO' : 'Configuration'
  }

  override get signInCode(): string | undefined {
    return this.kind === 'signIn' ? this.code : undefined
  }
}

/**
 * Why a SAML response was refused. Every code reaches the browser as the same `?error=SamlResponse`;
 * the code and the detail go to the log only (an attacker learns nothing of which check failed).
 * `encrypted_assertion`: the assertion is encrypted, which the engine does not decrypt (it asks for none);
 * `subject_confirmation`: no bearer SubjectConfirmation with the data the Web SSO profile requires.
 */
export type SamlResponseCode =
  | 'malformed'
  | 'signature'
  | 'assertion_count'
  | 'issuer'
  | 'audience'
  | 'destination'
  | 'recipient'
  | 'in_response_to'
  | 'not_yet_valid'
  | 'expired'
  | 'replayed'
  | 'unsolicited'
  | 'status'
  | 'no_name_id'
  | 'encrypted_assertion'
  | 'subject_confirmation'

/** A SAML response refused by one of the checks (`SamlResponseCode`). */
export class SamlResponseError extends AuthError {
  override readonly kind = 'signIn'
  readonly code: SamlResponseCode

  constructor(code: SamlResponseCode, message: string, options?: { cause?: unknown }) {
    super('SamlResponse', message, options)
    this.code = code
  }

  override get clientCode(): ClientErrorCode {
    return 'SamlResponse'
  }

  // What an operator should see: a refused response is an identity provider's misconfiguration or an attack.
  override get logLevel(): 'error' | 'warn' | 'debug' {
    return 'warn'
  }
}

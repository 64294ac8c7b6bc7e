/**
 * What a JSON client is told about a failed flow besides its code: the HTTP status it gets when it
 * asked for JSON (and not for Auth.js's `{ url }`), and one sentence saying what to do about it.
 * Fixed texts per code, never the error's own message: that one is for the log and may hold a
 * provider's words or the server's detail.
 */
import type { ClientErrorCode } from '../errors.js'
import type { AuthFailure } from '../http/respond.js'

/** The status and the fix of a failure, for a JSON answer. */
export interface FailureAdvice {
  status: number
  message: string
}

// A Record over the union: a new client code does not compile until it has its advice.
const ADVICE: Readonly<Record<ClientErrorCode, (basePath: string) => FailureAdvice>> = {
  MissingCSRF: (basePath) => ({
    status: 403,
    message:
      `The CSRF token is missing, stale or was sent from another origin. Fetch a new one from GET ${basePath}/csrf ` +
      '(it changes at sign-in and sign-out), keep the cookie that answer sets, and send the token as csrfToken in the body.',
  }),
  CredentialsSignin: () => ({ status: 401, message: 'The credentials were refused: check them and try again.' }),
  AccessDenied: () => ({ status: 403, message: 'The signIn callback refused this sign-in.' }),
  Impersonating: () => ({ status: 403, message: 'An administrator impersonating the user cannot change their password, address, second factor, passkeys or linked accounts.' }),
  RateLimited: () => ({ status: 429, message: 'Too many attempts: wait the seconds of the Retry-After header, then try again.' }),
  Configuration: () => ({ status: 500, message: 'The server could not complete the request; its log says why.' }),
  AdapterError: () => ({ status: 503, message: 'The database could not be reached: try again in a moment.' }),
  EmailSignInError: () => ({ status: 400, message: 'The e-mail address was refused, or the e-mail could not be sent: check the address and try again.' }),
  Verification: () => ({ status: 403, message: 'The e-mail link is invalid, used or expired: ask for a new one.' }),
  InvalidCheck: () => ({ status: 400, message: 'The sign-in expired or was started in another browser or on another host: start it again.' }),
  OAuthSignInError: () => ({ status: 502, message: 'The sign-in with the provider could not be started: try again later.' }),
  OAuthCallbackError: () => ({ status: 400, message: 'The provider refused or failed the sign-in (the code says how): start it again.' }),
  OAuthAccountNotLinked: () => ({ status: 403, message: 'The address belongs to an account that signs in another way: sign in that way, then link this provider.' }),
  TwoFactor: () => ({ status: 401, message: 'The second step of the sign-in was refused or expired (the code says which): enter a current code, or sign in again.' }),
  WebAuthnVerificationError: () => ({ status: 400, message: 'The passkey response was refused (the code says why): fetch new options and try again.' }),
  SSO: () => ({ status: 403, message: "Single sign-on refused the sign-in (the code says why: no_connection, sso_required, address_outside_domains): sign in another way, or through the organization's identity provider." }),
  SamlResponse: () => ({ status: 400, message: "The identity provider's SAML response was refused (the server's log says which check): start the sign-in again." }),
  UserBanned: () => ({ status: 403, message: 'The account is banned by an administrator: no sign-in is accepted until the ban is lifted or expires.' }),
}

// Codes whose fix differs from their error's.
const CODE_ADVICE: Readonly<Partial<Record<string, (basePath: string) => string>>> = {
  email_not_verified: (basePath) => `The address is not verified yet: open the link sent at sign-up, or ask for a new one with POST ${basePath}/verify-email/resend.`,
}

/**
 * The status and the fix of `failure`.
 *
 * @param failure The failure's code (and `code`).
 * @param basePath Where the routes are, e.g. `/api/auth`, named in the fix.
 * @returns A 4xx or 5xx status and a sentence for the developer of the client.
 * @example
 * failureAdvice({ error: 'MissingCSRF' }, '/api/auth').status // 403
 */
export function failureAdvice(failure: AuthFailure, basePath: string): FailureAdvice {
  const advice = ADVICE[failure.error](basePath)
  const byCode = failure.code !== undefined && Object.hasOwn(CODE_ADVICE, failure.code) ? CODE_ADVICE[failure.code] : undefined
  return byCode ? { status: advice.status, message: byCode(basePath) } : advice
}

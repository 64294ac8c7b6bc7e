/**
 * The shapes the auth routes answer, as a browser sees them. Declared here rather than imported
 * from the server's types so that the client module pulls no server code (nor its declarations)
 * into a page; test/client/module.test.ts checks that the error codes stay the same.
 */

/** The signed-in user, as GET /session gives it. */
export interface SessionUser {
  id: string
  name?: string | null
  email?: string | null
  image?: string | null
  [key: string]: unknown
}

/** What GET /session answers for a signed-in user (a `session` callback may add keys). */
export interface Session {
  user: SessionUser
  /** When the session expires, ISO 8601. */
  expires: string
  /** `RefreshAccessTokenError` when only a new sign-in gives a provider's access token again. */
  error?: 'RefreshAccessTokenError' | (string & {})
  [key: string]: unknown
}

/** The kinds of provider the server configures. */
export type ProviderType = 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn'

/** One entry of GET /providers. */
export interface ClientProvider {
  id: string
  name: string
  type: ProviderType
  signinUrl: string
  callbackUrl: string
}

/**
 * The code of a failed sign-in or sign-out, as the server puts it in `?error=` of the page it sends
 * the browser to, and in the `error` of its `{ url, error, code }` JSON answer.
 */
export type SignInErrorCode =
  | 'AccessDenied'
  | 'AdapterError'
  | 'Configuration'
  | 'CredentialsSignin'
  | 'EmailSignInError'
  | 'InvalidCheck'
  | 'MissingCSRF'
  | 'OAuthAccountNotLinked'
  | 'OAuthCallbackError'
  | 'OAuthSignInError'
  | 'RateLimited'
  | 'SSO'
  | 'SamlResponse'
  | 'TwoFactor'
  | 'UserBanned'
  | 'Impersonating'
  | 'Verification'
  | 'WebAuthnVerificationError'

/**
 * The `error` of the JSON error bodies (`{ error, message }`): a malformed request, an unknown
 * route or provider (400), a failed CSRF check on POST /session (403), a session cookie that an
 * update would make too large (413), a session store that is down (503), a server that does not
 * know its URL or failed (500).
 */
export type ResponseErrorCode =
  | 'InvalidRequest'
  | 'UnknownAction'
  | 'InvalidProvider'
  | 'MissingCSRF'
  | 'SessionTokenTooLarge'
  | 'AdapterError'
  | 'Configuration'
  | 'InternalError'

/**
 * Failures found by this client rather than reported by the server: the request did not reach it
 * (`NetworkError`), or the answer was not the JSON the route gives (`UnexpectedResponse`, e.g. a
 * proxy's error page or a wrong `basePath`).
 */
export type TransportErrorCode = 'NetworkError' | 'UnexpectedResponse'

/** Every code the client can report. */
export type AuthErrorCode = SignInErrorCode | ResponseErrorCode | TransportErrorCode

/** What `signIn` (without navigation) and `signOut({ redirect: false })` resolve with. */
export interface SignInResult {
  /** True when the server accepted the request. */
  ok: boolean
  /** The HTTP status of the answer (200 for a flow failure, as Auth.js's routes answer; 429 for `RateLimited`). */
  status: number
  /**
   * Where the server would send the browser: the callback URL after a credentials sign-in, the
   * verify-request page after an e-mail sign-in, the provider's authorization URL for OAuth. Null
   * when the request failed.
   */
  url: string | null
  /** Set when `ok` is false. */
  error?: AuthErrorCode
  /** The finer code the server gives with some errors (`CredentialsSignin`: `credentials` or the app's own; `InvalidCheck`: which check). */
  code?: string
}

/**
 * A request to the auth routes failed: thrown by `getSession`, `getCsrfToken`, `getProviders`,
 * and by `signIn`/`signOut` when the server could not be asked or gave no usable answer.
 */
export class AuthClientError extends Error {
  /** The server's `error` code, or a transport code. */
  readonly type: AuthErrorCode
  /** The HTTP status, 0 when no answer arrived. */
  readonly status: number

  constructor(type: AuthErrorCode, status: number, message: string) {
    super(message)
    this.name = 'AuthClientError'
    this.type = type
    this.status = status
  }
}

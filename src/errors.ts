/**
 * Every failure Portcullis reports is an `AuthError` with a stable `type`, so callers can `switch`
 * on it. What reaches a browser is only the error *code* (`?error=CredentialsSignin`); the detail
 * goes to the logger.
 *
 * @see spec/auth-library-spec.md §7
 */

/**
 * Every `AuthError['type']`, as the keys of an interface: the core's here, and each wing adds its own
 * where it declares its errors (`declare module`, e.g. src/features/passkey/errors.ts), so this file
 * names no feature.
 */
export interface ErrorTypes {
  AccessDenied: true
  AccountUnlinkError: true
  AdapterError: true
  CallbackRouteError: true
  CredentialsSignin: true
  EmailSignInError: true
  Impersonating: true
  InvalidConfiguration: true
  InvalidProvider: true
  InvalidRequest: true
  JWTSessionError: true
  MissingCSRF: true
  MissingRequestContext: true
  MissingSecret: true
  OAuthAccountNotLinked: true
  RateLimited: true
  RecentSignInRequired: true
  RefreshAccessTokenError: true
  SessionTokenTooLarge: true
  TwoFactor: true
  UnknownAction: true
  UntrustedHost: true
  Verification: true
}

/** Every `AuthError['type']`, for exhaustive switches. */
export type ErrorType = keyof ErrorTypes & string

/**
 * The codes a client may see in `?error=`, as the keys of an interface (the wings add theirs, as for
 * `ErrorTypes`).
 */
export interface ClientErrorCodes {
  AccessDenied: true
  AdapterError: true
  Configuration: true
  CredentialsSignin: true
  EmailSignInError: true
  Impersonating: true
  MissingCSRF: true
  OAuthAccountNotLinked: true
  RateLimited: true
  TwoFactor: true
  Verification: true
}

/**
 * The code a client sees in `?error=`: the error's own type where it is safe and useful to show,
 * `Configuration` for anything that is the server's fault.
 */
export type ClientErrorCode = keyof ClientErrorCodes & string

/** Base class of every error Portcullis throws or reports. */
export class AuthError extends Error {
  /** Stable identifier of the failure. */
  readonly type: ErrorType
  /** Which built-in page shows it: the sign-in page (with a message) or the error page. */
  readonly kind: 'signIn' | 'error' = 'error'

  constructor(type: ErrorType, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.type = type
    this.name = new.target.name
  }

  /** The code put in the `error` query parameter of the page the user is sent to. */
  get clientCode(): ClientErrorCode {
    return 'Configuration'
  }

  /**
   * A short, fixed identifier (never provider text) put beside the code in the sign-in page's URL as
   * `?code=`, for the errors whose `code` says which step refused; none for the others.
   */
  get signInCode(): string | undefined {
    return undefined
  }

  /**
   * How loudly a failed request logs it: the server's faults as errors, what an operator should
   * see (OAuth checks and provider errors) as warnings, a user's wrong input at debug only.
   */
  get logLevel(): 'error' | 'warn' | 'debug' {
    return this.clientCode === 'Configuration' ? 'error' : 'debug'
  }
}

/** No secret in production. Thrown by init. */
export class MissingSecretError extends AuthError {
  constructor(message = 'No secret: set AUTH_SECRET (generate one with `openssl rand -base64 33`) or pass `secret` to Portcullis().') {
    super('MissingSecret', message)
  }
}

/** The configuration cannot work; the message says what to change. Thrown by init. */
export class InvalidConfigurationError extends AuthError {
  constructor(message: string) {
    super('InvalidConfiguration', message)
  }
}

/** `trustHost: false` (or `AUTH_TRUST_HOST=false`) without `AUTH_URL`: no trustworthy origin. */
export class UntrustedHostError extends AuthError {
  constructor(message: string) {
    super('UntrustedHost', message)
  }
}

/**
 * `authorize` returned `null` (or threw this). Subclass it to send your own `code` to the sign-in
 * page (`?error=CredentialsSignin&code=<code>`):
 *
 * @example
 * ```ts
 * class AccountLocked extends CredentialsSignin { code = 'account_locked' }
 * Credentials({ authorize: async (c) => { if (await isLocked(c.email)) throw new AccountLocked(); return null } })
 * ```
 */
export class CredentialsSignin extends AuthError {
  override readonly kind = 'signIn'
  /** Shown to the client as `?code=`: keep it a short, non-sensitive identifier. */
  code = 'credentials'

  constructor(message = 'Sign-in with credentials failed.', options?: { cause?: unknown }) {
    super('CredentialsSignin', message, options)
  }

  override get signInCode(): string | undefined {
    return this.code
  }

  override get clientCode(): ClientErrorCode {
    return 'CredentialsSignin'
  }
}

/** Why a second-factor step was refused (`TwoFactorError.code`). */
export type TwoFactorCode = 'invalid_code' | 'code_required' | 'pending_invalid' | 'not_enrolled' | 'already_enrolled' | 'not_signed_in'

/**
 * A second-factor step was refused:
 * - `invalid_code`: the code is wrong, expired, or was used already (a replay), or the recovery code is unknown or used;
 * - `code_required`: adding a passkey for a user with the second factor on came without a code (a
 *   page without the code field, or a script that skipped it);
 * - `pending_invalid`: the second page was reached without this browser's pending sign-in (skipped,
 *   expired after 5 minutes, or its cookie copied to another browser);
 * - `not_enrolled` / `already_enrolled`: the user has no confirmed TOTP enrolment / already has one;
 * - `not_signed_in`: an enrolment call without a signed-in user.
 */
export class TwoFactorError extends AuthError {
  override readonly kind = 'signIn'
  readonly code: TwoFactorCode

  constructor(code: TwoFactorCode, message: string) {
    super('TwoFactor', message)
    this.code = code
  }

  override get signInCode(): string | undefined {
    return this.code
  }

  override get clientCode(): ClientErrorCode {
    return 'TwoFactor'
  }
}

/** The CSRF token of a state-changing POST was missing or did not match its cookie. */
export class MissingCSRFError extends AuthError {
  override readonly kind = 'signIn'
  constructor(message = 'The CSRF token was missing or did not match the CSRF cookie.') {
    super('MissingCSRF', message)
  }

  override get clientCode(): ClientErrorCode {
    return 'MissingCSRF'
  }
}

/** The `signIn` callback returned false. */
export class AccessDeniedError extends AuthError {
  constructor(message = 'The signIn callback refused this sign-in.') {
    super('AccessDenied', message)
  }

  override get clientCode(): ClientErrorCode {
    return 'AccessDenied'
  }
}

/** A provider's callback failed for a reason that is not the user's input (e.g. `authorize` threw). */
export class CallbackRouteError extends AuthError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CallbackRouteError', message, options)
  }
}

/** A route named a provider that is not configured. */
export class InvalidProviderError extends AuthError {
  constructor(message: string) {
    super('InvalidProvider', message)
  }
}

/** A route or method that Portcullis does not serve. */
export class UnknownActionError extends AuthError {
  constructor(message: string) {
    super('UnknownAction', message)
  }
}

/** A malformed request: unparsable body, unsupported content type, bad Host header. */
export class InvalidRequestError extends AuthError {
  /** HTTP status to answer with (400, 413 or 415). */
  readonly status: number
  constructor(message: string, status = 400) {
    super('InvalidRequest', message)
    this.status = status
  }
}

/** `auth()`, `signIn()` or `signOut()` called outside a request that passed through Portcullis. */
export class MissingRequestContextError extends AuthError {
  constructor(what: string) {
    super(
      'MissingRequestContext',
      `${what} was called outside a request: without a request argument it works only inside a request that passed through \`handlers\`, the \`auth\` middleware (app.use(auth)) or auth(handler). ` +
        (what === 'signIn()' || what === 'signOut()' || what === 'unlinkAccount()'
          ? `Call ${what} from such a route handler; it takes no request argument.`
          : what === 'getAccessToken()'
            ? 'Elsewhere, pass the request: getAccessToken({ req, res }, providerId).'
            : `Elsewhere, pass the request: ${what.slice(0, -1)}req, res).`),
    )
  }
}

/** An invalid JWT session token (`portcullis/jwt` `decode`). */
export class JWTSessionError extends AuthError {
  constructor(message = 'The session token could not be decrypted or has expired.') {
    super('JWTSessionError', message)
  }
}

/**
 * A JWT session token came out larger than `jwt.maxSize` once sealed. Its cookie would be split
 * into more chunks than the limit allows, and headers that large are refused by proxies and
 * servers (Node reads 16 KB of request headers by default, nginx 8 KB per line), so the user
 * would be locked out by their own cookie. What goes into the token is the `jwt` callback's
 * return value, on POST /session with the client's `update(data)` in hand: that is what to trim.
 * The server's fault, so the client sees `Configuration` and the log says what to change.
 */
export class SessionTokenTooLargeError extends AuthError {
  /** Bytes of the sealed token. */
  readonly size: number
  /** The limit it exceeded, `jwt.maxSize`. */
  readonly maxSize: number

  /**
   * @param size Bytes of the sealed token.
   * @param maxSize `jwt.maxSize`.
   * @param trigger The `jwt` callback's trigger that produced the token, when there was one.
   */
  constructor(size: number, maxSize: number, trigger?: 'signIn' | 'signUp' | 'update') {
    const from = trigger ? `the \`jwt\` callback (trigger: '${trigger}')` : 'the `jwt` callback'
    super(
      'SessionTokenTooLarge',
      `The session token would be ${size} bytes, over jwt.maxSize (${maxSize}); its cookie is not sent. ` +
        `Trim what ${from} returns: keep large data (group lists, provider tokens, profiles, what the client passes to update()) in a database ` +
        'and only its id in the token; the `session` callback can add what the client needs to the session, which is not stored in the cookie. ' +
        'Raising jwt.maxSize sends larger cookies, which proxies may reject.',
    )
    this.size = size
    this.maxSize = maxSize
  }
}

/**
 * The database adapter failed (the database is down or did not answer in time, a constraint was
 * violated), or the session store did. The client sees only the code `AdapterError`; the cause is
 * logged where it happened. The request fails, the process goes on, and the next request tries the
 * database again. It carries `status` and `statusCode` 503 and `expose: false`, as `http-errors`
 * would make it: passed to `next(error)`, Express's default handler answers 503 with no detail.
 */
export class AdapterError extends AuthError {
  /** The adapter method that failed, e.g. `getSessionAndUser`. */
  readonly method: string
  /** 503 Service Unavailable: a dependency is down, try again later (a load balancer may retry elsewhere). */
  readonly status = 503
  /** The same as `status`, for the error handlers that read this name. */
  readonly statusCode = 503
  /** The message is for the log, not the client. */
  readonly expose = false

  /**
   * @param options.hint What to do about it, when the cause is recognised (e.g. tables that were
   * never migrated: "run `npx knex migrate:latest`"); it ends the message.
   */
  constructor(method: string, options: { cause: unknown; hint?: string | undefined }) {
    super('AdapterError', `The adapter's ${method}() failed${options.hint ? `: ${options.hint}` : '.'}`, { cause: options.cause })
    this.method = method
  }

  override get clientCode(): ClientErrorCode {
    return 'AdapterError'
  }
}

/**
 * The provider account's e-mail address belongs to a user who has not linked this provider. Signing
 * them in would hand that user's account to whoever controls the address at the provider, so the
 * user must sign in the way they did before (then link). A provider may opt out with
 * `allowDangerousEmailAccountLinking`. Also thrown when the account is linked to another user than
 * the one signed in.
 */
export class OAuthAccountNotLinkedError extends AuthError {
  override readonly kind = 'signIn'
  constructor(message: string) {
    super('OAuthAccountNotLinked', message)
  }

  override get clientCode(): ClientErrorCode {
    return 'OAuthAccountNotLinked'
  }

  override get logLevel(): 'warn' {
    return 'warn'
  }
}

/**
 * An e-mail sign-in could not start: the address was refused by `normalizeIdentifier`, or the
 * e-mail could not be sent (the token created for it is deleted again). The user is sent back to
 * the sign-in page with `error=EmailSignInError`; a failed send is logged as an error, without the
 * link.
 */
export class EmailSignInError extends AuthError {
  override readonly kind = 'signIn'
  constructor(message: string, options?: { cause?: unknown }) {
    super('EmailSignInError', message, options)
  }

  override get clientCode(): ClientErrorCode {
    return 'EmailSignInError'
  }
}

/**
 * An e-mail sign-in link did not work: its token is unknown, expired, already used, or was issued
 * for another address. Nothing changes (no user, no session); the error page (403) says the link is
 * no longer valid.
 */
export class VerificationError extends AuthError {
  constructor(message = 'The sign-in link is invalid, expired or already used.') {
    super('Verification', message)
  }

  override get clientCode(): ClientErrorCode {
    return 'Verification'
  }
}

/** Which limit refused a sign-in attempt: the client IP's or the identifier's (e-mail, username). */
export type RateLimitScope = 'ip' | 'identifier'

/**
 * Too many sign-in attempts: the client's IP address, or the identifier it tried (the e-mail address
 * or username), used up its window of the `rateLimit` option. The client gets `429 Too Many
 * Requests` with `Retry-After`, and the code `RateLimited` (the page, or `{ url, error }` in JSON).
 * The server-side `signIn(..., { redirect: false })` throws it.
 *
 * @example
 * ```ts
 * try {
 *   await signIn('credentials', { username, password, redirect: false })
 * } catch (error) {
 *   if (error instanceof RateLimitedError) res.set('Retry-After', String(error.retryAfterSeconds)).status(429)
 * }
 * ```
 */
export class RateLimitedError extends AuthError {
  override readonly kind = 'signIn'
  /** Seconds until the window that refused the attempt ends (at least 1): the `Retry-After` value. */
  readonly retryAfterSeconds: number
  /** The limit that refused it. */
  readonly scope: RateLimitScope
  /** 429 Too Many Requests, for `next(error)`: Express's default handler answers it, with `headers`. */
  readonly status = 429
  /** The same as `status`, for the error handlers that read this name. */
  readonly statusCode = 429
  /** The message names the client address and the limit: for the log, not the client. */
  readonly expose = false
  /** `Retry-After`, which Express's default handler (finalhandler) sets from an error's `headers`. */
  readonly headers: Readonly<Record<'Retry-After', string>>

  /**
   * @param retryAfterSeconds Seconds until another attempt may succeed.
   * @param scope The limit that refused the attempt.
   * @param message For the log: which limit, never the identifier itself.
   */
  constructor(retryAfterSeconds: number, scope: RateLimitScope, message = 'Too many sign-in attempts.') {
    super('RateLimited', message)
    this.retryAfterSeconds = retryAfterSeconds
    this.scope = scope
    this.headers = { 'Retry-After': String(retryAfterSeconds) }
  }

  override get clientCode(): ClientErrorCode {
    return 'RateLimited'
  }

  // An operator wants to see an attack (and which address it comes from).
  override get logLevel(): 'warn' {
    return 'warn'
  }
}

/** Why `unlinkAccount()` refused: see `AccountUnlinkError.code`. */
export type AccountUnlinkCode = 'not_signed_in' | 'not_linked' | 'ambiguous' | 'last_sign_in_method' | 'unsupported_adapter'

/**
 * `unlinkAccount()` removed nothing. `code` says why: `not_signed_in`; `not_linked` (the user has no
 * account at that provider); `ambiguous` (several, pass `providerAccountId`); `last_sign_in_method`
 * (removing it would leave the user no way to sign in); `unsupported_adapter` (no adapter, or one
 * without `getAccountsByUserId` and `unlinkAccount`).
 */
export class AccountUnlinkError extends AuthError {
  readonly code: AccountUnlinkCode
  constructor(code: AccountUnlinkCode, message: string) {
    super('AccountUnlinkError', message)
    this.code = code
  }
}

/**
 * A sensitive action (`deleteAccount()`, a change of address or password, of the second factor or
 * the passkeys) was asked of a session whose last sign-in or confirmation is older than the action
 * allows (`maxAge`): the user must confirm who they are first, on the account's confirmation page
 * (`url`, when known), and come back.
 * See docs/account.md.
 */
export class RecentSignInRequiredError extends AuthError {
  /** Seconds since the session was last confirmed (`Infinity` when it carries no record). */
  readonly age: number
  /** The most the action allows, in seconds. */
  readonly maxAge: number
  /** The confirmation page, which sends the user back where they were (set by the built-in actions' checks). */
  readonly url: string | undefined
  constructor(message: string, details: { age: number; maxAge: number; url?: string | undefined }) {
    super('RecentSignInRequired', message)
    this.age = details.age
    this.maxAge = details.maxAge
    this.url = details.url
  }
}

/**
 * A change of the user's credentials (password, e-mail address, second factor, passkeys, linked
 * accounts, the account's deletion) asked in a session an administrator started as the user
 * (impersonation, docs/admin.md): refused, whoever asks. The error page says so (`?error=Impersonating`).
 */
export class ImpersonatingError extends AuthError {
  /** The administrator acting as the user. */
  readonly impersonatedBy: string

  constructor(what: string, impersonatedBy: string) {
    super('Impersonating', `${what}: refused in a session an administrator (${impersonatedBy}) started as the user: an impersonation cannot change the user's credentials.`)
    this.impersonatedBy = impersonatedBy
  }

  override get clientCode(): ClientErrorCode {
    return 'Impersonating'
  }
}

/** Why `getAccessToken()` has no token to give: see `RefreshAccessTokenError.code`. */
export type RefreshAccessTokenCode = 'not_signed_in' | 'no_account' | 'ambiguous' | 'no_refresh_token' | 'invalid_grant' | 'provider_error' | 'unsupported_adapter'

/**
 * `getAccessToken()` could not return a valid access token. `code` says why and what to do:
 * - `not_signed_in`: nobody is signed in on this request.
 * - `no_account`: the user has no account at that provider (database sessions), or the session token
 *   carries no tokens of it (JWT sessions: the user signed in with another provider, the `jwt`
 *   callback dropped the `provider_tokens` claim, or the session predates Portcullis). Sign in with it.
 * - `ambiguous`: the user has several accounts at that provider: pass `{ providerAccountId }`.
 * - `no_refresh_token`: the access token has expired and the provider gave no refresh token (ask for
 *   one: e.g. the `offline_access` scope, Google's `access_type: 'offline'`). Sign in again.
 * - `invalid_grant`: the provider refused the refresh token (revoked, expired, or the user withdrew
 *   consent): RFC 6749's `invalid_grant`, or GitHub's `bad_refresh_token`. Sign in again.
 * - `provider_error`: the refresh request failed otherwise (network, provider outage, a client
 *   misconfiguration): the log says which. Worth retrying later.
 * - `unsupported_adapter`: database sessions need the adapter's `getAccountsByUserId` and `updateAccount`.
 *
 * `no_refresh_token` and `invalid_grant` mark the session: `auth()` then returns it with
 * `error: 'RefreshAccessTokenError'` (JWT sessions: until the next sign-in; database sessions: on the
 * request that failed), for the page to send the user to sign in again.
 *
 * @example
 * ```ts
 * try {
 *   const token = await getAccessToken('google')
 * } catch (error) {
 *   if (error instanceof RefreshAccessTokenError && error.signInRequired) return res.redirect('/api/auth/signin')
 *   throw error
 * }
 * ```
 */
export class RefreshAccessTokenError extends AuthError {
  readonly code: RefreshAccessTokenCode
  /** The provider's id. */
  readonly provider: string

  constructor(code: RefreshAccessTokenCode, provider: string, message: string, options?: { cause?: unknown }) {
    super('RefreshAccessTokenError', message, options)
    this.code = code
    this.provider = provider
  }

  /** True when only a (new) sign-in with the provider gives a token: `not_signed_in`, `no_account`, `no_refresh_token`, `invalid_grant`. */
  get signInRequired(): boolean {
    return this.code === 'not_signed_in' || this.code === 'no_account' || this.code === 'no_refresh_token' || this.code === 'invalid_grant'
  }

  // A refused refresh token is the user's business (they revoked it); an outage the operator's.
  override get logLevel(): 'error' | 'warn' | 'debug' {
    return this.code === 'provider_error' || this.code === 'unsupported_adapter' || this.code === 'ambiguous' ? 'error' : 'debug'
  }
}

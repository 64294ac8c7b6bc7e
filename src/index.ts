/**
 * Portcullis: authentication for Express 4/5, Connect and `node:http`.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import Portcullis from 'portcullis'
 * import Credentials from 'portcullis/providers/credentials'
 *
 * const { handlers, auth } = Portcullis({
 *   providers: [Credentials({ authorize: async ({ username }) => (username === 'ada' ? { id: '1', name: 'Ada' } : null) })],
 * })
 * const app = express()
 * app.use('/api/auth', handlers)
 * app.get('/me', async (req, res) => res.json(await auth(req, res)))
 * ```
 * @see spec/auth-library-spec.md §4.6
 */
import { resolveConfig } from './config/resolve.js'
import {
  createAuth,
  type AuthFunction,
  type ChangePasswordFunction,
  type DisableTotpFunction,
  type EnrollTotpFunction,
  type GetAccessTokenFunction,
  type GetCsrfTokenFunction,
  type ListPasskeysFunction,
  type ListSessionsFunction,
  type RegenerateRecoveryCodesFunction,
  type RemovePasskeyFunction,
  type RevokeOtherSessionsFunction,
  type RevokeSessionFunction,
  type SignInFunction,
  type SignOutEverywhereFunction,
  type SignOutFunction,
  type SignUpFunction,
  type UnlinkAccountFunction,
  type VerifyTotpFunction,
} from './api/index.js'
import { RequestScope } from './http/request-scope.js'
import { createHandlers, type Handlers } from './http/router.js'
import { startPruning } from './prune.js'
import type { PortcullisConfig } from './config/types.js'

/** What `Portcullis(config)` returns (spec §2.3). */
export interface PortcullisResult {
  /** Request handler for the auth routes: `app.use('/api/auth', handlers)`. */
  handlers: Handlers
  auth: AuthFunction
  signIn: SignInFunction
  signOut: SignOutFunction
  /** The CSRF token for the app's own sign-in or sign-out form (see `signIn`'s CSRF check). */
  getCsrfToken: GetCsrfTokenFunction
  /** Removes one of the signed-in user's provider accounts, unless it is their last way to sign in. */
  unlinkAccount: UnlinkAccountFunction
  /** A valid access token of the signed-in user's account at a provider, refreshed when it expires. */
  getAccessToken: GetAccessTokenFunction
  /** The signed-in user's sessions on every device, the request's own marked. */
  listSessions: ListSessionsFunction
  /** Ends one of the signed-in user's sessions (CSRF-checked). */
  revokeSession: RevokeSessionFunction
  /** Ends every session of the signed-in user but this one (CSRF-checked). */
  revokeOtherSessions: RevokeOtherSessionsFunction
  /** Ends every session of the signed-in user, this one included (CSRF-checked). */
  signOutEverywhere: SignOutEverywhereFunction
  /** The signed-in user's passkeys (with a passkey provider). */
  listPasskeys: ListPasskeysFunction
  /** Removes one of the signed-in user's passkeys, unless it is their last way to sign in (CSRF-checked). */
  removePasskey: RemovePasskeyFunction
  /** Signs up with the password provider from the app's own form (CSRF-checked; the same outcome for a new and a taken address). */
  signUp: SignUpFunction
  /** Changes the signed-in user's password (the current one checked) and ends their other sessions (CSRF-checked). */
  changePassword: ChangePasswordFunction
  /** Starts the signed-in user's TOTP enrolment: the secret, its URI and QR code (`twoFactor` option). */
  enrollTotp: EnrollTotpFunction
  /** Confirms the enrolment with a first code (the recovery codes), or checks a code (CSRF-checked). */
  verifyTotp: VerifyTotpFunction
  /** Turns the signed-in user's second factor off after a current code (CSRF-checked). */
  disableTotp: DisableTotpFunction
  /** Ten new recovery codes for the signed-in user after a current code (CSRF-checked). */
  regenerateRecoveryCodes: RegenerateRecoveryCodesFunction
}

/**
 * Initialises Portcullis once: resolves and freezes the configuration (the object passed in is
 * not modified), derives the session keys, and returns the router and the session functions.
 *
 * @param config Providers, secret, session options, callbacks, events, pages, theme.
 * @throws MissingSecretError in production (`NODE_ENV=production`) when no secret is set.
 * @throws InvalidConfigurationError when an option cannot work; the message says what to change.
 */
export default function Portcullis(config: PortcullisConfig): PortcullisResult {
  const resolved = resolveConfig(config)
  const requestScope = new RequestScope()
  const handlers = createHandlers(resolved, requestScope)
  const api = createAuth(resolved, requestScope)
  startPruning(resolved)
  return { handlers, ...api }
}

export * from './errors.js'
export type * from './types.js'
export type { PortcullisConfig, Provider, ProviderInput } from './config/types.js'
export type { LogFields, LoggerInstance, LoggerOption, LogLevel, LogRecord } from './logger.js'
export type {
  AuthFunction,
  AuthenticatedRequest,
  ChangePasswordFunction,
  ChangePasswordOptions,
  CsrfOptions,
  DisableTotpFunction,
  EnrollTotpFunction,
  GetAccessTokenFunction,
  GetAccessTokenOptions,
  GetCsrfTokenFunction,
  ListPasskeysFunction,
  ListSessionsFunction,
  PasskeysCallContext,
  PasswordCallContext,
  RegenerateRecoveryCodesFunction,
  RemovePasskeyFunction,
  RevokeOtherSessionsFunction,
  RevokeSessionFunction,
  SessionsCallContext,
  SignInFunction,
  SignInOptions,
  SignOutEverywhereFunction,
  SignOutFunction,
  SignOutOptions,
  SignUpFunction,
  SignUpOptions,
  TotpEnrollment,
  TotpVerification,
  TwoFactorCallContext,
  TwoFactorCodeOptions,
  UnlinkAccountFunction,
  UnlinkOptions,
  VerifyTotpFunction,
} from './api/index.js'
export type { Handlers, NextFunction } from './http/router.js'
export type { NodeRequest } from './http/request.js'
export type { AccessTokenOptions } from './oauth/access-token.js'

/**
 * The server-side API, one public function a file, composed here for one resolved config. Each
 * function finds the current request through its request scope (`handlers`, the `auth` middleware,
 * `auth(handler)`) or takes it as an argument.
 */
import type { ResolvedConfig } from '../config/types.js'
import type { RequestScope } from '../http/request-scope.js'
import { createGetAccessToken } from './access-token.js'
import { createAuthFunction } from './auth.js'
import { createChangePassword } from './change-password.js'
import { createApi } from './context.js'
import { createGetCsrfToken } from './csrf-token.js'
import { createListPasskeys } from './list-passkeys.js'
import { createListSessions } from './list-sessions.js'
import { createRemovePasskey } from './remove-passkey.js'
import { createRevokeOtherSessions } from './revoke-other-sessions.js'
import { createRevokeSession } from './revoke-session.js'
import { createSignOutEverywhere } from './sign-out-everywhere.js'
import { createSignIn } from './sign-in.js'
import { createSignOut } from './sign-out.js'
import { createSignUp } from './sign-up.js'
import { createUnlinkAccount } from './unlink-account.js'
import { createDisableTotp } from './disable-totp.js'
import { createEnrollTotp } from './enroll-totp.js'
import { createRegenerateRecoveryCodes } from './regenerate-recovery-codes.js'
import { createResetTwoFactor } from './reset-two-factor.js'
import { createVerifyTotp } from './verify-totp.js'

export type { AuthFunction, AuthenticatedRequest } from './auth.js'
export type { GetAccessTokenFunction, GetAccessTokenOptions } from './access-token.js'
export type { GetCsrfTokenFunction } from './csrf-token.js'
export type { ChangePasswordFunction, ChangePasswordOptions } from './change-password.js'
export type { CsrfOptions } from './context.js'
export type { PasswordCallContext } from './password-context.js'
export type { ListPasskeysFunction } from './list-passkeys.js'
export type { ListSessionsFunction } from './list-sessions.js'
export type { PasskeysCallContext } from './passkeys-context.js'
export type { RemovePasskeyFunction } from './remove-passkey.js'
export type { RevokeOtherSessionsFunction } from './revoke-other-sessions.js'
export type { RevokeSessionFunction } from './revoke-session.js'
export type { SessionsCallContext } from './sessions-context.js'
export type { SignOutEverywhereFunction } from './sign-out-everywhere.js'
export type { SignInFunction, SignInOptions } from './sign-in.js'
export type { SignOutFunction, SignOutOptions } from './sign-out.js'
export type { SignUpFunction, SignUpOptions } from './sign-up.js'
export type { UnlinkAccountFunction, UnlinkOptions } from './unlink-account.js'
export type { DisableTotpFunction } from './disable-totp.js'
export type { EnrollTotpFunction } from './enroll-totp.js'
export type { RegenerateRecoveryCodesFunction } from './regenerate-recovery-codes.js'
export type { ResetTwoFactorFunction } from './reset-two-factor.js'
export type { TwoFactorCallContext, TwoFactorCodeOptions } from './two-factor-context.js'
export type { TotpVerification, VerifyTotpFunction } from './verify-totp.js'
export type { TotpEnrollment } from '../two-factor/factor.js'

/** Builds `auth`, `signIn`, `signOut`, `getCsrfToken`, `unlinkAccount`, `getAccessToken`, the session list's, the passkeys', the password provider's and the second factor's functions for a resolved config. */
export function createAuth(config: ResolvedConfig, requestScope: RequestScope) {
  const api = createApi(config, requestScope)
  return {
    auth: createAuthFunction(api),
    signIn: createSignIn(api),
    signOut: createSignOut(api),
    getCsrfToken: createGetCsrfToken(api),
    unlinkAccount: createUnlinkAccount(api),
    getAccessToken: createGetAccessToken(api),
    listSessions: createListSessions(api),
    revokeSession: createRevokeSession(api),
    revokeOtherSessions: createRevokeOtherSessions(api),
    signOutEverywhere: createSignOutEverywhere(api),
    listPasskeys: createListPasskeys(api),
    removePasskey: createRemovePasskey(api),
    signUp: createSignUp(api),
    changePassword: createChangePassword(api),
    enrollTotp: createEnrollTotp(api),
    verifyTotp: createVerifyTotp(api),
    disableTotp: createDisableTotp(api),
    regenerateRecoveryCodes: createRegenerateRecoveryCodes(api),
    resetTwoFactor: createResetTwoFactor(api),
  }
}

/**
 * The built-in pages: sign-in, sign-out, error, verify-request, sessions, passkeys and the password
 * provider's (sign-up, forgotten password, reset), and the
 * passkey script they load. Each returns a complete HTML document with every interpolated value escaped.
 */
export { renderSignInPage, signInErrorMessage } from './signin.js'
export type { SignInPageProps, SignInPageProvider } from './signin.js'
export { renderSignOutPage } from './signout.js'
export type { SignOutPageProps } from './signout.js'
export { renderErrorPage } from './error.js'
export type { ErrorPageProps, ErrorPageResult } from './error.js'
export { renderEmailConfirmPage } from './email-confirm.js'
export type { EmailConfirmPageProps } from './email-confirm.js'
export { renderVerifyRequestPage } from './verify-request.js'
export type { VerifyRequestPageProps } from './verify-request.js'
export { renderSessionsPage } from './sessions.js'
export type { SessionsPageProps } from './sessions.js'
export { renderPasskeysPage } from './passkeys.js'
export type { PasskeysPageProps } from './passkeys.js'
export { renderForgotPasswordPage, renderResetPasswordPage, renderSignUpPage } from './password.js'
export type { ForgotPasswordPageProps, ResetPasswordPageProps, SignUpPageProps } from './password.js'
export { renderTwoFactorPage, renderTwoFactorSetupPage } from './two-factor.js'
export type { TwoFactorPageProps, TwoFactorSetupPageProps } from './two-factor.js'
export { WEBAUTHN_SCRIPT, webauthnScriptDigest } from './webauthn-script.js'
export type { PageScript } from './theme.js'

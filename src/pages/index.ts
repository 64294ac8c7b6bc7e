/**
 * The core's built-in pages: sign-in, sign-out, error, verify-request and the "confirm your
 * address" page (e-mail links and the password provider's verification share it). Each returns a
 * complete HTML document with every interpolated value escaped. A feature's own pages live in its
 * folder (`src/features/<name>/pages/`), built on the same theme and shell (theme.ts, html.ts).
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
export type { PageScript } from './theme.js'

/**
 * `portcullis/client`: the browser side of Portcullis, for pages and single-page apps served with
 * (or beside) the Express server. A dependency-free ES module that talks to the auth routes the
 * way Auth.js's browser clients do (`/csrf`, `/session`, `/providers`, `/signin/:provider`,
 * `/callback/:provider`, `/signout`, with `X-Auth-Return-Redirect: 1`), so it also works against
 * an Auth.js v5 server.
 *
 * @example
 * import { configure, getSession, signIn, signOut, onSessionChange } from 'portcullis/client'
 * configure({ basePath: '/api/auth' })
 * onSessionChange((session) => render(session))
 * await signIn('credentials', { username, password, redirect: false })
 * @packageDocumentation
 */
export { configure, type ClientOptions } from './config.js'
export { getCsrfToken } from './csrf.js'
export { getProviders } from './providers.js'
export { getSession } from './session.js'
export { updateSession } from './update-session.js'
export { signIn, type SignInOptions, type AuthorizationParams } from './sign-in.js'
export { signOut, type SignOutOptions } from './sign-out.js'
export { onSessionChange, type SessionListener } from './session-change.js'
export { readAuthError, type UrlAuthError } from './error-from-url.js'
export {
  AuthClientError,
  type AuthErrorCode,
  type ClientProvider,
  type ProviderType,
  type ResponseErrorCode,
  type Session,
  type SessionUser,
  type SignInErrorCode,
  type SignInResult,
  type TransportErrorCode,
} from './types.js'

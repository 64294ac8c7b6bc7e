/**
 * The server-side API, one public function a file, composed here for one resolved config. Each
 * function finds the current request through its request scope (`handlers`, the `auth` middleware,
 * `auth(handler)`) or takes it as an argument.
 */
import type { ResolvedConfig } from '../config/types.js'
import type { RequestScope } from '../http/request-scope.js'
import { compositionOf } from '../composition/index.js'
import { createAuthFunction, type AuthFunction } from './auth.js'
import { createApi } from './context.js'
import { createGetCsrfToken, type GetCsrfTokenFunction } from './csrf-token.js'
import { createRequireScopes, type RequireScopesFunction } from './require-scopes.js'
import { createSignIn, type SignInFunction } from './sign-in.js'
import { createSignOut, type SignOutFunction } from './sign-out.js'
import { createUnlinkAccount, type UnlinkAccountFunction } from './unlink-account.js'

export type { AuthFunction, AuthenticatedRequest } from './auth.js'
export type { GetCsrfTokenFunction } from './csrf-token.js'
export type { CredentialAuth, RequireScopesFunction, ScopesMiddleware } from './require-scopes.js'
export type { CsrfOptions } from './context.js'
export type { SessionsCallContext } from './sessions-context.js'
export type { SignInFunction, SignInOptions } from './sign-in.js'
export type { SignOutFunction, SignOutOptions } from './sign-out.js'
export type { UnlinkAccountFunction, UnlinkOptions } from './unlink-account.js'

/**
 * Builds `auth`, `signIn`, `signOut`, `getCsrfToken` and `unlinkAccount` for a resolved config, and
 * each registered feature's functions (`Feature.api`: the session list's, the passkeys', the
 * password provider's, the second factor's, `getAccessToken`).
 */
export function createAuth(config: ResolvedConfig, requestScope: RequestScope): CoreApi {
  const api = createApi(config, requestScope)
  const core: CoreApi = {
    auth: createAuthFunction(api),
    signIn: createSignIn(api),
    signOut: createSignOut(api),
    getCsrfToken: createGetCsrfToken(api),
    unlinkAccount: createUnlinkAccount(api),
    requireScopes: createRequireScopes(api),
  }
  const features = compositionOf(config).registered.map((feature) => feature.api?.(api) ?? {})
  return Object.assign({}, ...features, core)
}

/** The core's server-side functions. */
export interface CoreApi {
  auth: AuthFunction
  signIn: SignInFunction
  signOut: SignOutFunction
  getCsrfToken: GetCsrfTokenFunction
  unlinkAccount: UnlinkAccountFunction
  /** Middleware: signed in, and the credential's scopes (an API key's) include these; RFC 6750 answers otherwise. */
  requireScopes: RequireScopesFunction
}

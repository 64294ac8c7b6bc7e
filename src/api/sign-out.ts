/** The server-side `signOut(options)` (spec §4.5): CSRF-checked like the sign-out form. */
import { redirectTarget } from '../actions/context.js'
import { failureResponse } from '../actions/failure.js'
import { signOutTo } from '../actions/signout.js'
import type { AuthResponse } from '../http/respond.js'
import { assertServerCsrf, finish, serverContext, type Api, type CsrfOptions } from './context.js'

/** Options of the server-side `signOut`. */
export interface SignOutOptions extends CsrfOptions {
  redirect?: boolean | undefined
  redirectTo?: string | undefined
}

/** Server-side sign-out: resolves with the URL the user is (or should be) sent to. */
export type SignOutFunction = (options?: SignOutOptions) => Promise<string>

/** Builds `signOut` for one instance. */
export function createSignOut(api: Api): SignOutFunction {
  return async (options = {}) => {
    const { req, res, ctx } = serverContext(api, 'signOut()')
    const redirect = options.redirect ?? true
    let response: AuthResponse
    try {
      assertServerCsrf(api, ctx, options, 'signIn()/signOut()')
      // Not the page the user came from: it is usually the protected one they are leaving.
      response = await signOutTo(ctx, await redirectTarget(ctx, options.redirectTo ?? `${ctx.origin}/`))
    } catch (error) {
      if (!redirect) throw error
      response = failureResponse(error, ctx)
    }
    return finish(api, req, res, response, redirect)
  }
}

/** The server-side `unlinkAccount(providerId, options)`: removes one of the signed-in user's provider accounts. */
import { unlinkAccount as unlinkSignedInAccount, type UnlinkAccountOptions } from '../actions/unlink.js'
import { appendCookies } from '../http/respond.js'
import type { AdapterAccount } from '../types.js'
import { assertServerCsrf, serverContext, type Api, type CsrfOptions } from './context.js'

/** Options of the server-side `unlinkAccount`: which account, and the CSRF proof (as for `signOut`). */
export interface UnlinkOptions extends UnlinkAccountOptions, CsrfOptions {}

/**
 * The server-side `unlinkAccount(providerId, options)`: removes the signed-in user's account at that
 * provider and returns it, unless it is their last way to sign in. Call it from a route handler (it
 * reads the request context, like `signOut`) for a POST of the app's own form carrying the CSRF token.
 * @throws AccountUnlinkError (`code`: not_signed_in, not_linked, ambiguous, last_sign_in_method, unsupported_adapter)
 * @throws MissingCSRFError without a valid CSRF token (unless `skipCsrfCheck`)
 */
export type UnlinkAccountFunction = (providerId: string, options?: UnlinkOptions) => Promise<AdapterAccount>

/** Builds `unlinkAccount` for one instance. */
export function createUnlinkAccount(api: Api): UnlinkAccountFunction {
  return async (providerId, options = {}) => {
    const { req, res, ctx } = serverContext(api, 'unlinkAccount()')
    assertServerCsrf(api, ctx, options, 'unlinkAccount()')
    const { account, cookies } = await unlinkSignedInAccount(ctx, providerId, { providerAccountId: options.providerAccountId })
    if (cookies.length > 0) {
      if (res && !res.headersSent) {
        appendCookies(res, cookies)
        api.forgetSession(req, cookies)
      } else api.config.logger.warn('SessionCookieNotRefreshed', `unlinkAccount(): the response was sent before the session cookie could drop the "${providerId}" tokens.`)
    }
    return account
  }
}

/**
 * The server-side `deleteAccount(req)`: deletes the signed-in user's account, after a recent sign-in
 * or confirmation, and clears this browser's session cookie.
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import { endedHere } from '../../../api/sessions-context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { AdapterUser } from '../../../types.js'
import { callerPage } from '../../../actions/sensitive.js'
import { accountOf } from '../config.js'
import { assertRecentSignIn } from '../recent.js'

/** What `deleteAccount()` takes. */
export interface DeleteAccountOptions extends CsrfOptions {
  /** Seconds the last sign-in or confirmation counts as recent. Default: `account.recentSignInMaxAge` (600). */
  maxAge?: number | undefined
}

/**
 * Deletes the signed-in user's account: every row of it (in one transaction of the adapter's
 * `deleteUser`), every session of theirs on every process, then the `userDeleted` event and a
 * mail to the address. Only after a recent sign-in or confirmation (`requireRecentSignIn`).
 * CSRF-checked. This request's cookie is cleared on `res` (or Express's `req.res`).
 *
 * @returns The deleted user.
 * @throws MissingCSRFError; AccountError `not_signed_in`; RecentSignInRequiredError (send the user to
 *   `requireRecentSignIn`'s `url`); AdapterError; InvalidConfigurationError when `account` is off
 * @example
 * ```ts
 * app.post('/settings/delete', express.urlencoded({ extended: false }), async (req, res) => {
 *   await deleteAccount({ req, res }, { csrfToken: req.body.csrfToken })
 *   res.redirect('/')
 * })
 * ```
 */
export type DeleteAccountFunction = (req: SessionsCallContext, options?: DeleteAccountOptions) => Promise<AdapterUser>

export function createDeleteAccount(api: Api): DeleteAccountFunction {
  return async (given, options = {}) => {
    const { req, res } = givenRequest(given, 'deleteAccount()')
    const account = accountOf(api.config)
    const ctx = actionContext(api, req)
    assertServerCsrf(api, ctx, options, 'deleteAccount()')
    const confirmation = await assertRecentSignIn(ctx, options.maxAge ?? account.recentSignInMaxAge, 'deleteAccount()', callerPage(ctx))
    // The deletion's code (and the mail's) loads on the first deletion, never on the session-read path.
    const { deleteUserAccount } = await import('../delete.js')
    const user = await deleteUserAccount(ctx, account, confirmation.userId)
    endedHere(api, { req, res, ctx }, 'deleteAccount()')
    return user
  }
}

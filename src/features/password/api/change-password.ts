/**
 * The server-side `changePassword(req, { currentPassword, newPassword })`: for the signed-in user
 * of the password provider, the current password checked (rate-limited as a sign-in attempt), the
 * new one against the policy, the user's other sessions ended; this one stays.
 */
import { loadAccounts, passwordProvider } from '../routes/shared.js'
import { AccountUnlinkError } from '../../../errors.js'
import { appendCookies } from '../../../http/respond.js'
import { ownerWithSessionId, sessionOwner } from '../../../session/devices.js'
import { assertRecentSignInIfRequired, callerPage } from '../../../actions/sensitive.js'
import { assertServerCsrf, type Api, type CsrfOptions } from '../../../api/context.js'
import { passwordCall, type PasswordCallContext } from './context.js'

/** What `changePassword()` takes. */
export interface ChangePasswordOptions extends CsrfOptions {
  currentPassword: string
  newPassword: string
}

/**
 * Changes the signed-in user's password and ends their other sessions. CSRF-checked. The current
 * password is always asked; with the `account` option, a recent sign-in or confirmation too
 * (`account.recentSignInMaxAge`, docs/account.md).
 *
 * @throws PasswordPolicyError (`code` wrong_password, too_short, too_long, common, breached),
 *   RateLimitedError, MissingCSRFError, AccountUnlinkError `not_signed_in`, UnknownActionError (no
 *   password provider), RecentSignInRequiredError (its `url`: the confirmation page, back to the
 *   page the request came from)
 * @example
 * ```ts
 * app.post('/account/password', express.urlencoded({ extended: false }), async (req, res) => {
 *   await changePassword(req, { currentPassword: req.body.current, newPassword: req.body.next, csrfToken: req.body.csrfToken })
 *   res.redirect('/account')
 * })
 * ```
 */
export type ChangePasswordFunction = (req: PasswordCallContext, options: ChangePasswordOptions) => Promise<void>

export function createChangePassword(api: Api): ChangePasswordFunction {
  return async (given, options) => {
    const call = passwordCall(api, given, 'changePassword()')
    assertServerCsrf(api, call.ctx, options, 'changePassword()')
    const provider = passwordProvider(api.config)
    const signedIn = await sessionOwner(call.ctx)
    if (!signedIn) throw new AccountUnlinkError('not_signed_in', 'changePassword(): nobody is signed in on this request.')
    // With the account option: a recent sign-in too (docs/account.md), before the current password is tried.
    await assertRecentSignInIfRequired(call.ctx, 'changePassword()', callerPage(call.ctx))
    // The change refuses every older JWT without a session id: this session, if it is one, is given an
    // id first (a new cookie), so that it stays as the user's other sessions end.
    const { owner, cookies } = await ownerWithSessionId(call.ctx, signedIn)
    if (cookies.length > 0) {
      if (call.res && !call.res.headersSent) {
        appendCookies(call.res, cookies)
        // auth() later in this request reads the renewed token, not the request's, which the change refuses.
        api.forgetSession(call.req, cookies)
      } else {
        api.config.logger.warn(
          'SessionCookieNotReplaced',
          'changePassword() gave this request\'s session (a token from before session.store) a session id, but no response (or one already sent) was given to carry its new cookie: the old cookie is refused after the change. Pass { req, res }.',
        )
      }
    }
    const { changePassword } = await loadAccounts()
    await changePassword(call.ctx, provider, owner, { currentPassword: options.currentPassword, newPassword: options.newPassword })
  }
}

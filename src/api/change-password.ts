/**
 * The server-side `changePassword(req, { currentPassword, newPassword })`: for the signed-in user
 * of the password provider, the current password checked (rate-limited as a sign-in attempt), the
 * new one against the policy, the user's other sessions ended; this one stays.
 */
import { loadAccounts, passwordProvider } from '../actions/password/shared.js'
import { AccountUnlinkError } from '../errors.js'
import { sessionOwner } from '../session/devices.js'
import { assertServerCsrf, type Api, type CsrfOptions } from './context.js'
import { passwordCall, type PasswordCallContext } from './password-context.js'

/** What `changePassword()` takes. */
export interface ChangePasswordOptions extends CsrfOptions {
  currentPassword: string
  newPassword: string
}

/**
 * Changes the signed-in user's password and ends their other sessions. CSRF-checked.
 *
 * @throws PasswordPolicyError (`code` wrong_password, too_short, too_long, common, breached),
 *   RateLimitedError, MissingCSRFError, AccountUnlinkError `not_signed_in`, UnknownActionError (no
 *   password provider)
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
    const owner = await sessionOwner(call.ctx)
    if (!owner) throw new AccountUnlinkError('not_signed_in', 'changePassword(): nobody is signed in on this request.')
    const { changePassword } = await loadAccounts()
    await changePassword(call.ctx, provider, owner, { currentPassword: options.currentPassword, newPassword: options.newPassword })
  }
}

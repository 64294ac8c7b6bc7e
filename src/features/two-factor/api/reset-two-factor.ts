/** The server-side `resetTwoFactor(userId)`: an administrator's way back for a locked-out user. */
import type { Api } from '../../../api/context.js'
import { resetTwoFactor } from '../reset.js'
import { assertTwoFactor } from '../routes/shared.js'

/**
 * Removes a user's second factor without a code: their TOTP enrolment (pending or confirmed) and
 * recovery codes are deleted, so their next sign-in asks for the first factor only, and they can
 * enrol again. For an administrator helping a user who lost their authenticator app and their
 * recovery codes, or whose stored key no longer opens (the secret it was sealed with was dropped).
 * It takes no request and checks nobody: call it only from a route that has checked the caller is
 * allowed to (an administrator, after confirming who the user is), with a CSRF check of its own.
 * Emits `twoFactorReset` and logs a `TwoFactorReset` warning when there was an enrolment. The
 * user's sessions are left as they are.
 *
 * @param userId The user's id (`session.user.id`, the adapter's `User.id`).
 * @returns `true` when there was an enrolment to remove, `false` when the user had none.
 * @throws TypeError when `userId` is not a non-empty string; UnknownActionError when `twoFactor` is off; AdapterError
 * @example
 * ```ts
 * app.post('/admin/users/:id/reset-two-factor', requireAdmin, async (req, res) => {
 *   const removed = await resetTwoFactor(req.params.id)
 *   res.json({ removed })
 * })
 * ```
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html (account recovery: replacing a lost authenticator)
 */
export type ResetTwoFactorFunction = (userId: string) => Promise<boolean>

export function createResetTwoFactor(api: Api): ResetTwoFactorFunction {
  return async (userId) => {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('resetTwoFactor(userId): userId must be the user\'s id, a non-empty string.')
    assertTwoFactor(api.config)
    return resetTwoFactor(api.config, userId)
  }
}

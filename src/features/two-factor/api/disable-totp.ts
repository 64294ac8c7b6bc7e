/** The server-side `disableTotp(req, { code })`. */
import type { Api } from '../../../api/context.js'
import { assertRecentForChange, twoFactorCall, type TwoFactorCallContext, type TwoFactorCodeOptions } from './context.js'

/**
 * Turns the signed-in user's second factor off, after a current code or a recovery code: their
 * enrolment and recovery codes are deleted. CSRF-checked.
 *
 * With the `account` option, only after a recent sign-in (docs/account.md).
 *
 * @throws RecentSignInRequiredError (its `url`: the confirmation page); TwoFactorError `invalid_code`, `not_enrolled`, `not_signed_in`; RateLimitedError; MissingCSRFError
 * @example
 * ```ts
 * await disableTotp(req, { code: req.body.code, csrfToken: req.body.csrfToken })
 * ```
 */
export type DisableTotpFunction = (req: TwoFactorCallContext, options: TwoFactorCodeOptions) => Promise<void>

export function createDisableTotp(api: Api): DisableTotpFunction {
  return async (given, options) => {
    const { ctx, user, factor } = await twoFactorCall(api, given, 'disableTotp()', options)
    await assertRecentForChange(ctx, 'disableTotp()')
    await factor.disableTwoFactor(ctx, user.id, options.code)
  }
}

/** The server-side `regenerateRecoveryCodes(req, { code })`. */
import type { Api } from '../../../api/context.js'
import { assertRecentForChange, twoFactorCall, type TwoFactorCallContext, type TwoFactorCodeOptions } from './context.js'

/**
 * Replaces the signed-in user's recovery codes with ten new ones, after a current code (or a
 * recovery code). CSRF-checked.
 *
 * @returns The new codes, to show once.
 * With the `account` option, only after a recent sign-in (docs/account.md).
 *
 * @throws RecentSignInRequiredError (its `url`: the confirmation page); TwoFactorError `invalid_code`, `not_enrolled`, `not_signed_in`; RateLimitedError; MissingCSRFError
 * @example
 * ```ts
 * const codes = await regenerateRecoveryCodes(req, { code: req.body.code, csrfToken: req.body.csrfToken })
 * ```
 */
export type RegenerateRecoveryCodesFunction = (req: TwoFactorCallContext, options: TwoFactorCodeOptions) => Promise<string[]>

export function createRegenerateRecoveryCodes(api: Api): RegenerateRecoveryCodesFunction {
  return async (given, options) => {
    const { ctx, user, factor } = await twoFactorCall(api, given, 'regenerateRecoveryCodes()', options)
    await assertRecentForChange(ctx, 'regenerateRecoveryCodes()')
    return factor.regenerateRecoveryCodes(ctx, user.id, options.code)
  }
}

/** The server-side `verifyTotp(req, { code })`: confirms the enrolment, or checks a code (step-up). */
import { TwoFactorError } from '../../../errors.js'
import type { SecondFactorProof } from '../../../types.js'
import type { Api } from '../../../api/context.js'
import { assertRecentForChange, twoFactorCall, type TwoFactorCallContext, type TwoFactorCodeOptions } from './context.js'

/** What `verifyTotp()` resolves with. */
export interface TotpVerification {
  /** What the code was: `recovery-code` is used up. */
  method: SecondFactorProof['method']
  /** Present when this code confirmed a pending enrolment: the ten recovery codes, to show once. */
  recoveryCodes?: string[] | undefined
}

/**
 * For the signed-in user: with a pending enrolment, confirms it with the first code (from then on
 * their password sign-ins ask for a code) and returns the recovery codes; with a confirmed one,
 * checks a code or a recovery code, e.g. before a sensitive action. Each code is good once, and
 * wrong codes count against the user's rate limit. CSRF-checked.
 *
 * With the `account` option, confirming an enrolment needs a recent sign-in (docs/account.md).
 *
 * @throws RecentSignInRequiredError (confirming an enrolment); TwoFactorError `invalid_code`, `not_enrolled`, `not_signed_in`; RateLimitedError; MissingCSRFError
 * @example
 * ```ts
 * app.post('/account/two-factor', express.urlencoded({ extended: false }), async (req, res) => {
 *   const { recoveryCodes } = await verifyTotp(req, { code: req.body.code, csrfToken: req.body.csrfToken })
 *   res.render('recovery-codes', { recoveryCodes })
 * })
 * ```
 */
export type VerifyTotpFunction = (req: TwoFactorCallContext, options: TwoFactorCodeOptions) => Promise<TotpVerification>

export function createVerifyTotp(api: Api): VerifyTotpFunction {
  return async (given, options) => {
    const { ctx, user, factor } = await twoFactorCall(api, given, 'verifyTotp()', options)
    const enrolment = await factor.enrolmentOf(ctx, user.id)
    if (!enrolment) throw new TwoFactorError('not_enrolled', 'verifyTotp(): the user has no TOTP enrolment; start one with enrollTotp().')
    if (!enrolment.enabledAt) {
      // Confirming an enrolment turns a factor on; checking a code changes nothing.
      await assertRecentForChange(ctx, 'verifyTotp()')
      return { method: 'totp', recoveryCodes: await factor.confirmEnrolment(ctx, user.id, options.code) }
    }
    return { method: await factor.checkSecondFactor(ctx, user.id, options.code) }
  }
}

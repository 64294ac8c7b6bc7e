/** The server-side `enrollTotp(req)`: starts the signed-in user's TOTP enrolment. */
import type { TotpEnrollment } from '../factor.js'
import type { Api } from '../../../api/context.js'
import { assertRecentForChange, twoFactorCall, type TwoFactorCallContext } from './context.js'

/**
 * Starts a TOTP enrolment for the signed-in user: a new secret (replacing one still pending), the
 * `otpauth://` URI and its QR code as an `<svg>` element. Nothing changes for sign-in until
 * `verifyTotp()` confirms it with a first code.
 *
 * With the `account` option, only after a recent sign-in (docs/account.md).
 *
 * @throws RecentSignInRequiredError (its `url`: the confirmation page); TwoFactorError `already_enrolled`, `not_signed_in`; UnknownActionError (`twoFactor` off)
 * @example
 * ```ts
 * app.get('/account/two-factor', async (req, res) => {
 *   const { qrCode, secret } = await enrollTotp(req)
 *   res.send(`${qrCode}<p>Key: ${secret}</p><form method="post">…</form>`)
 * })
 * ```
 */
export type EnrollTotpFunction = (req: TwoFactorCallContext) => Promise<TotpEnrollment>

export function createEnrollTotp(api: Api): EnrollTotpFunction {
  return async (given) => {
    const { ctx, user, factor } = await twoFactorCall(api, given, 'enrollTotp()')
    await assertRecentForChange(ctx, 'enrollTotp()')
    return factor.startEnrolment(ctx, user, { reuse: false })
  }
}

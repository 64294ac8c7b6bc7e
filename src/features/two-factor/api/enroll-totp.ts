/** The server-side `enrollTotp(req)`: starts the signed-in user's TOTP enrolment. */
import type { TotpEnrollment } from '../factor.js'
import type { Api } from '../../../api/context.js'
import { twoFactorCall, type TwoFactorCallContext } from './context.js'

/**
 * Starts a TOTP enrolment for the signed-in user: a new secret (replacing one still pending), the
 * `otpauth://` URI and its QR code as an `<svg>` element. Nothing changes for sign-in until
 * `verifyTotp()` confirms it with a first code.
 *
 * @throws TwoFactorError `already_enrolled`, `not_signed_in`; UnknownActionError (`twoFactor` off)
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
    return factor.startEnrolment(ctx, user, { reuse: false })
  }
}

/**
 * The server-side `resetUserTwoFactor(req, userId)` and `sendPasswordResetLink(req, userId)`: an
 * administrator helps a user who lost their authenticator app, or their password. The wings they
 * reach (two-factor, password) are imported on the first call.
 */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { AdminError } from '../errors.js'
import { adminCall, type AdminCallContext } from './context.js'

/**
 * Removes user `userId`'s second factor (TOTP and recovery codes), as the two-factor wing's
 * `resetTwoFactor(userId)` does, once the caller may (`user: ['reset-two-factor']`); CSRF-checked.
 * Their next sign-in asks for the first factor only, and they can enrol again; `twoFactorReset` event.
 *
 * @returns False when the user had no second factor.
 * @throws AdminError `not_signed_in`, `forbidden`, `not_found`; MissingCSRFError; UnknownActionError (`twoFactor` off)
 */
export type ResetUserTwoFactorFunction = (req: AdminCallContext, userId: string, options?: CsrfOptions) => Promise<boolean>

/**
 * Mails user `userId` a password reset link (the "forgot password" link, valid for the password
 * provider's `resetMaxAge`, dead once the password changes), once the caller may
 * (`user: ['send-reset-link']`); CSRF-checked. A user without a password gets one this way: the
 * link sets it. The administrator never sees the link.
 *
 * @returns When the link expires.
 * @throws AdminError `not_signed_in`, `forbidden`, `not_found`, `no_address`, `mail_failed`; MissingCSRFError; UnknownActionError (no password provider)
 */
export type SendPasswordResetLinkFunction = (req: AdminCallContext, userId: string, options?: CsrfOptions) => Promise<Date>

export function createResetUserTwoFactor(api: Api): ResetUserTwoFactorFunction {
  return async (given, userId, options = {}) => {
    assertUserId(userId, 'resetUserTwoFactor')
    await adminCall(api, given, 'resetUserTwoFactor()', 'reset-two-factor', options)
    const { assertTwoFactor } = await import('../../two-factor/routes/shared.js')
    assertTwoFactor(api.config)
    if (!(await api.config.adapter!.getUser!(userId))) throw new AdminError('not_found', `resetUserTwoFactor(): there is no user ${userId}.`)
    return (await import('../../two-factor/reset.js')).resetTwoFactor(api.config, userId)
  }
}

export function createSendPasswordResetLink(api: Api): SendPasswordResetLinkFunction {
  return async (given, userId, options = {}) => {
    assertUserId(userId, 'sendPasswordResetLink')
    const { ctx } = await adminCall(api, given, 'sendPasswordResetLink()', 'send-reset-link', options)
    const { passwordProvider } = await import('../../password/routes/shared.js')
    const provider = passwordProvider(api.config)
    const user = await api.config.adapter!.getUser!(userId)
    if (!user) throw new AdminError('not_found', `sendPasswordResetLink(): there is no user ${userId}.`)
    if (typeof user.email !== 'string' || user.email === '') throw new AdminError('no_address', `sendPasswordResetLink(): user ${userId} has no e-mail address.`)
    const accounts = await (await import('../../password/load.js')).loadAccounts()
    const expires = await accounts.mailResetLink(ctx, provider, user, user.email)
    if (!expires) throw new AdminError('mail_failed', `sendPasswordResetLink(): the link to user ${userId} could not be mailed (the log says why).`)
    return expires
  }
}

/** @throws TypeError unless `userId` is a non-empty string. */
export function assertUserId(userId: unknown, what: string): asserts userId is string {
  if (typeof userId !== 'string' || userId.length === 0) throw new TypeError(`${what}(req, userId): userId must be a non-empty string.`)
}

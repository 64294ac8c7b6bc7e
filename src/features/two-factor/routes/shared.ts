/**
 * What the second factor's routes share: the check that it is on, its operations (loaded on first
 * use, with otpauth and qrcode), and the refusal a form shows on itself.
 */
import { twoFactorOf } from '../config.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { TwoFactorError, UnknownActionError } from '../../../errors.js'
import { signedInUserId } from '../../../session/strategy.js'
import type { AdapterUser } from '../../../types.js'
import type { ActionContext } from '../../../actions/context.js'

/** @throws UnknownActionError when the `twoFactor` option is off (its routes exist only with it). */
export function assertTwoFactor(config: ResolvedConfig): void {
  if (!twoFactorOf(config)) throw new UnknownActionError('The second factor is off: set the twoFactor option to use its routes.')
}

/** The signed-in user's row, or null (signed out, or the user is gone). */
export async function signedInUser(ctx: ActionContext): Promise<AdapterUser | null> {
  const userId = await signedInUserId(ctx)
  return userId ? ctx.config.adapter!.getUser!(userId) : null
}

let factor: Promise<typeof import('../factor.js')> | undefined

/** The second factor's operations, imported on first use. */
export function loadFactor(): Promise<typeof import('../factor.js')> {
  return (factor ??= import('../factor.js'))
}

/** The message a form shows for a refused code, or undefined for any other error. */
export function codeRefusal(error: unknown): string | undefined {
  return error instanceof TwoFactorError && error.code === 'invalid_code' ? 'That code is not right, or was used already. Enter the next code your app shows.' : undefined
}

/**
 * An administrator's reset of a user's second factor: the enrolment and its recovery codes deleted
 * without a code, for a user who lost their authenticator app and their codes (or whose key no
 * longer opens, see docs/deployment.md#rotating-the-secret). Small and free of otpauth: it needs
 * only the adapter.
 */
import type { ResolvedConfig } from '../../config/types.js'
import { emitEvent } from '../../events.js'
import type { TwoFactorAdapter } from './config.js'

/**
 * Deletes `userId`'s enrolment (pending or confirmed) and recovery codes; emits `twoFactorReset`
 * when there was one.
 * @returns Whether there was an enrolment.
 * @throws AdapterError
 */
export async function resetTwoFactor(config: ResolvedConfig, userId: string): Promise<boolean> {
  const removed = await (config.adapter as TwoFactorAdapter).deleteTwoFactor(userId)
  if (removed) {
    config.logger.warn('TwoFactorReset', `The second factor of user ${userId} was reset (resetTwoFactor()): their password alone signs them in until they enrol again.`)
    await emitEvent(config, 'twoFactorReset', { userId })
  }
  return removed
}

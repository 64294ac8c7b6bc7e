/**
 * Deleting the signed-in user's account: every row of it removed by the adapter's `deleteUser` in
 * one transaction (the base tables and every feature's: passwords, passkeys, the second factor,
 * see adapters/knex/rows.ts), the user's sessions ended on every process, the features told
 * (`userDeleted` hook), the app told (`userDeleted` event), and a notice mailed to the address.
 * With `account.deletionGracePeriod`, the rows wait (grace.ts): the user is marked and signed out,
 * and the prune (prune-deleted.ts) deletes them once the period is over, telling as here (`tellDeleted`).
 */
import type { ActionContext } from '../../actions/context.js'
import { hooksOf } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { describeError, emitEvent } from '../../events.js'
import { revokeOwnSessions } from '../../session/devices.js'
import type { AdapterUser } from '../../types.js'
import type { ResolvedAccount } from './config.js'
import { AccountError } from './errors.js'
import { scheduleAccountDeletion } from './grace.js'
import { mailAccountDeleted, type MailContext } from './mail.js'

/**
 * Deletes `userId`, who has confirmed a recent sign-in (the caller checked it); with a grace period,
 * marks the account for deletion instead.
 *
 * A session an administrator holds as the user (impersonation) does not get here: the routes and
 * `deleteAccount()` refuse it first (`assertNotImpersonating`, with the recent sign-in's check), and
 * the admin API's `deleteUser` refuses every call made in one.
 *
 * @returns The deleted (or marked) user.
 * @throws AccountError `user_not_found`; AdapterError when the database or the session store fails.
 */
export async function deleteUserAccount(ctx: ActionContext, account: ResolvedAccount, userId: string): Promise<AdapterUser> {
  if (account.deletionGracePeriod > 0) return scheduleAccountDeletion(ctx, account, userId)
  const { config } = ctx
  const adapter = config.adapter!
  const user = await adapter.getUser!(userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  const owner = { userId, sessionId: undefined }
  // Ended first, so that no process lets the user's sessions in while the rows go (JWT sessions:
  // the store's "valid after" time refuses every older token, on every process that polls it).
  await revokeOwnSessions(ctx, owner, {}, 'accountDeleted', { everyToken: true })
  await adapter.deleteUser!(userId)
  // A JWT session recorded between the two steps (a sign-in racing the deletion) ends too.
  if (config.session.strategy === 'jwt') await revokeOwnSessions(ctx, owner, {}, 'accountDeleted', { everyToken: true })
  await tellDeleted(ctx, account, user)
  return user
}

/**
 * What follows the deletion of `user`'s rows, at once or by the prune: the features' `userDeleted`
 * hooks (errors logged), the app's `userDeleted` event, and the notice to the address.
 */
export async function tellDeleted(ctx: MailContext, account: ResolvedAccount, user: AdapterUser, { mail = true }: { mail?: boolean } = {}): Promise<void> {
  const config: ResolvedConfig = ctx.config
  for (const hook of hooksOf(config, 'userDeleted')) {
    try {
      await hook(config, user)
    } catch (error) {
      config.logger.error('UserDeletedHookFailed', `A feature's cleanup after deleting user ${user.id} failed; the user is deleted.`, describeError(error))
    }
  }
  await emitEvent(config, 'userDeleted', { user })
  if (mail && typeof user.email === 'string' && user.email.length > 0) await mailAccountDeleted(ctx, account, user.email)
}

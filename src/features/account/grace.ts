/**
 * The deletion grace period (`account.deletionGracePeriod`, docs/account.md): a deleted account is
 * marked (the users table's `deletedAt`) and signed out everywhere; a sign-in by any method within
 * the period clears the mark (the core's sign-in finish asks the `sessionStarted` hook); the
 * background prune asks the `prune` hook (prune-deleted.ts), which deletes the accounts whose period
 * has run out through the adapter's one-transaction `deleteUser`, guarded by the mark.
 *
 * Races: a sign-in clears the mark after its session is stored, and the deletion ends the user's
 * sessions both before and after it marks. A sign-in that found no mark therefore stored its session
 * before the mark, and the second ending takes it; one that found the mark restored the account.
 * A restore and the prune's delete are one statement each on the same row: one wins.
 */
import { authUrl, type ActionContext } from '../../actions/context.js'
import { emitEvent } from '../../events.js'
import { revokeOwnSessions } from '../../session/devices.js'
import type { AdapterUser, User } from '../../types.js'
import { accountOf, type ResolvedAccount } from './config.js'
import { AccountError } from './errors.js'
import { mailAccountRestored, mailDeletionScheduled } from './mail.js'

/**
 * Marks `userId` deleted and ends every session of theirs on every process; the rows stay until
 * the period is over.
 * @returns The marked user.
 * @throws AccountError `user_not_found`; AdapterError
 */
export async function scheduleAccountDeletion(ctx: ActionContext, account: ResolvedAccount, userId: string): Promise<AdapterUser> {
  const { config } = ctx
  const adapter = config.adapter!
  const user = await adapter.getUser!(userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  const owner = { userId, sessionId: undefined }
  await revokeOwnSessions(ctx, owner, {}, 'accountDeleted', { everyToken: true })
  const markedAt = new Date(ctx.now * 1000)
  if (!(await adapter.markUserDeleted!(userId, markedAt))) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  // A session stored by a sign-in that ran before the mark (and so restored nothing) ends too.
  await revokeOwnSessions(ctx, owner, {}, 'accountDeleted', { everyToken: true })
  const deleteAt = new Date(markedAt.getTime() + account.deletionGracePeriod * 1000)
  await emitEvent(config, 'userDeletionScheduled', { user, deleteAt })
  if (typeof user.email === 'string' && user.email.length > 0) await mailDeletionScheduled(ctx, account, user.email, deleteAt)
  return user
}

/**
 * The `sessionStarted` hook: a sign-in of a marked user restores the account, tells the app
 * (`userRestored`) and the address, and sends the browser to the page that says so.
 * @returns The restored page's URL (continuing to `redirect`), or undefined when nothing was marked.
 * @throws AccountError `user_not_found` when the prune deleted the user as the sign-in ran.
 */
export async function restoreOnSignIn(ctx: ActionContext, user: User | AdapterUser, redirect: string): Promise<string | undefined> {
  const adapter = ctx.config.adapter
  if (typeof user.id !== 'string' || !adapter?.restoreDeletedUser) return undefined
  const account = accountOf(ctx.config)
  if (!(await adapter.restoreDeletedUser(user.id))) {
    // The prune won the race: the session just stored is a deleted user's (a JWT would still read).
    if (account.deletionGracePeriod > 0 && !(await adapter.getUser!(user.id))) throw new AccountError('user_not_found', 'The account was deleted as it signed in: its grace period had run out.')
    return undefined
  }
  const restored = (await adapter.getUser!(user.id)) ?? (user as AdapterUser)
  await emitEvent(ctx.config, 'userRestored', { user: restored })
  if (typeof restored.email === 'string' && restored.email.length > 0) await mailAccountRestored(ctx, account, restored.email)
  return `${authUrl(ctx, '/account/restored')}?${new URLSearchParams({ callbackUrl: redirect })}`
}

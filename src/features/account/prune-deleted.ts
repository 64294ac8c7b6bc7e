/**
 * The end of the deletion grace period (grace.ts): the background prune (src/features/prune/) asks
 * the `prune` hook of the enabled features each time it runs; the account wing's deletes the
 * accounts marked longer ago than `account.deletionGracePeriod`, which it reads from its own
 * resolved option, so the prune wing knows nothing of accounts.
 */
import type { ResolvedConfig } from '../../config/types.js'
import { describeError } from '../../events.js'
import { accountOf } from './config.js'
import { tellDeleted } from './delete.js'

/** Users deleted per list the prune reads: each is its own transaction. */
const PRUNE_BATCH = 100

/**
 * The `prune` hook: deletes the accounts marked longer ago than the grace period, each through
 * `deleteUser` (every wing's rows, one transaction, only while still marked), then the features'
 * hooks, `userDeleted` and the notice. Several processes may run it at once: a user's delete
 * succeeds in one of them, and only that one tells.
 * @returns How many accounts it deleted.
 */
export async function pruneDeletedAccounts(config: ResolvedConfig, signal: AbortSignal): Promise<Readonly<Record<string, number>>> {
  const account = accountOf(config)
  const adapter = config.adapter
  if (account.deletionGracePeriod === 0 || !adapter?.listUsersMarkedDeleted) return {}
  const cutoff = new Date(Date.now() - account.deletionGracePeriod * 1000)
  // The notices link to the site: the `url` option's origin (the prune has no request).
  const mail = { config, origin: config.url?.origin ?? '' }
  let deleted = 0
  for (;;) {
    const ids = await adapter.listUsersMarkedDeleted(cutoff, PRUNE_BATCH)
    let found = 0
    for (const id of ids) {
      if (signal.aborted) return { deletedAccounts: deleted }
      const user = await adapter.deleteUser!(id, { markedBefore: cutoff })
      if (!user) continue
      found++
      deleted++
      if (!config.url) config.logger.warn('AccountMailNotSent', 'The notice of an account deleted by the prune was not sent: set the url option (AUTH_URL), which its link needs.')
      try {
        await tellDeleted(mail, account, user, { mail: config.url !== undefined })
      } catch (error) {
        config.logger.error('UserDeletedEventFailed', `Telling of the pruned account ${user.id} failed; its rows are deleted.`, describeError(error))
      }
    }
    // A short list is the last; a full one of users restored meanwhile would repeat for ever.
    if (ids.length < PRUNE_BATCH || found === 0) return { deletedAccounts: deleted }
  }
}

/** The server-side `updateUser(req, userId, { name, email })`: an administrator corrects a user's name or address. */
import type { Api } from '../../../api/context.js'
import { emitEvent } from '../../../events.js'
import { normalizeEmailAddress } from '../../../mail/normalize.js'
import type { AdapterUser } from '../../../types.js'
import { AdminError } from '../errors.js'
import type { AdminUser, UpdateUserOptions } from '../types.js'
import { adminCall, adminUser, type AdminCallContext } from './context.js'
import { assertUserId } from './help-user.js'

/**
 * Changes user `userId`'s `name` (at most 200 characters; `null` or `''` removes it) and/or
 * `email` (normalised as every sign-in does). A new address is not verified unless
 * `emailVerified: true` is given: the administrator vouches for it, or the user proves it with the
 * next mailed link. Emits `updateUser`. Needs `user: ['update']`; CSRF-checked.
 *
 * @returns The user as changed.
 * @throws AdminError `not_signed_in`, `forbidden`, `not_found`, `email_taken` (another user has the address); MissingCSRFError; TypeError for a bad name or address
 * @example
 * ```ts
 * app.post('/admin/users/:id/profile', express.urlencoded({ extended: false }), async (req, res) => {
 *   await updateUser(req, req.params.id, { name: req.body.name, email: req.body.email, csrfToken: req.body.csrfToken })
 *   res.redirect(`/admin/users/${req.params.id}`)
 * })
 * ```
 */
export type UpdateUserFunction = (req: AdminCallContext, userId: string, options: UpdateUserOptions) => Promise<AdminUser>

export function createUpdateUser(api: Api): UpdateUserFunction {
  return async (given, userId, options) => {
    assertUserId(userId, 'updateUser')
    const changes = requestedChanges(options)
    const { ctx } = await adminCall(api, given, 'updateUser()', 'update', options)
    const adapter = api.config.adapter!
    const user = await adapter.getUser!(userId)
    if (!user) throw new AdminError('not_found', `updateUser(): there is no user ${userId}.`)
    const update: Partial<AdapterUser> & Pick<AdapterUser, 'id'> = { id: userId }
    if (changes.name !== undefined) update.name = changes.name
    if (changes.email !== undefined && changes.email !== user.email) {
      update.email = changes.email
      update.emailVerified = options.emailVerified === true ? new Date() : null
    } else if (changes.email !== undefined && options.emailVerified === true && !user.emailVerified) {
      update.emailVerified = new Date()
    }
    const changed = Object.keys(update).length > 1 ? await write(adapter, update) : user
    if (changed !== user) await emitEvent(api.config, 'updateUser', { user: changed })
    // A new address is a changed address, whoever changed it: the audit log keeps it (the administrator its actor).
    if (update.email !== undefined) await emitEvent(api.config, 'emailChanged', { user: changed, previousEmail: user.email ?? null })
    return adminUser(api, ctx, changed)
  }
}

/** The name and address asked for, checked and normalised (undefined: unchanged). @throws TypeError */
function requestedChanges(options: UpdateUserOptions): { name?: string | null; email?: string } {
  if (options === null || typeof options !== 'object') throw new TypeError('updateUser(req, userId, { name?, email?, emailVerified?, csrfToken }): options must be an object.')
  const changes: { name?: string | null; email?: string } = {}
  if (options.name !== undefined) {
    const name = options.name === null || options.name === '' ? null : options.name
    if (name !== null && (typeof name !== 'string' || name.length > 200)) throw new TypeError('updateUser(): name must be a string of at most 200 characters (or null to remove it).')
    changes.name = name
  }
  if (options.email !== undefined) {
    try {
      changes.email = normalizeEmailAddress(options.email)
    } catch (error) {
      throw new TypeError(`updateUser(): email is not an address (${(error as Error).message}).`)
    }
  }
  return changes
}

/**
 * Writes `update`. The address is refused when the adapter's lookup finds another user with it
 * (MySQL's collations also match an address that differs only by accents, which its unique key
 * refuses too), and the users table's unique key decides a race: the loser's write fails, and the
 * address, read again, is another user's.
 * @throws AdminError `email_taken`
 */
async function write(adapter: NonNullable<Api['config']['adapter']>, update: Partial<AdapterUser> & Pick<AdapterUser, 'id'>): Promise<AdapterUser> {
  const email = update.email
  const takenBy = async () => (typeof email === 'string' ? await adapter.getUserByEmail!(email) : null)
  const taken = new AdminError('email_taken', `updateUser(): another user has the address ${email}.`)
  const holder = await takenBy()
  if (holder && holder.id !== update.id) throw taken
  try {
    return await adapter.updateUser!(update)
  } catch (error) {
    const winner = await takenBy()
    if (winner && winner.id !== update.id) throw taken
    throw error
  }
}

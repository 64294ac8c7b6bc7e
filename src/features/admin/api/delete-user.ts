/** The server-side `deleteUser(req, userId)`: an administrator deletes a user's account. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { UnknownActionError } from '../../../errors.js'
import type { ResolvedAccount } from '../../account/config.js'
import { AdminError } from '../errors.js'
import { adminCall, type AdminCallContext } from './context.js'
import { assertUserId } from './help-user.js'

/**
 * Deletes user `userId` at once, as the user's own deletion does without a grace period: every
 * session ended on every process, every row of every wing removed in one transaction (the
 * adapter's `deleteUser`), the `userDeleted` event, and the account wing's notice mailed to the
 * address. Needs the `account` option and `user: ['delete']`; CSRF-checked; nobody deletes
 * themselves this way (their own `deleteAccount()` asks for a recent sign-in).
 *
 * @throws AdminError `not_signed_in`, `forbidden`, `own_roles`, `not_found`; MissingCSRFError; UnknownActionError (`account` off)
 * @example
 * ```ts
 * app.post('/admin/users/:id/delete', express.urlencoded({ extended: false }), async (req, res) => {
 *   await deleteUser(req, req.params.id, { csrfToken: req.body.csrfToken })
 *   res.redirect('/admin/users')
 * })
 * ```
 */
export type DeleteUserFunction = (req: AdminCallContext, userId: string, options?: CsrfOptions) => Promise<void>

export function createDeleteUser(api: Api): DeleteUserFunction {
  return async (given, userId, options = {}) => {
    assertUserId(userId, 'deleteUser')
    const { ctx, callerId } = await adminCall(api, given, 'deleteUser()', 'delete', options)
    const account = api.config.features.account as ResolvedAccount | undefined
    if (!account) throw new UnknownActionError('deleteUser() deletes as the account wing does: set the account option (see docs/account.md).')
    if (userId === callerId) throw new AdminError('own_roles', 'deleteUser(): nobody deletes themselves here (deleteAccount() asks for a recent sign-in).')
    if (!(await api.config.adapter!.getUser!(userId))) throw new AdminError('not_found', `deleteUser(): there is no user ${userId}.`)
    const { deleteUserAccount } = await import('../../account/delete.js')
    await deleteUserAccount(ctx, { ...account, deletionGracePeriod: 0 }, userId)
  }
}

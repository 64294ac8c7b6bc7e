/** The server-side `setUserRoles(req, userId, roles)`: an administrator sets another user's roles. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { createSetRoles, type SetRolesResult } from '../../roles/api/set-roles.js'
import { AdminError } from '../errors.js'
import { adminCall, type AdminCallContext } from './context.js'

/**
 * Sets the roles of user `userId` (`null` or `[]`: the default ones) as `setRoles` does, reaching
 * every session of theirs (docs/roles.md). Needs `user: ['set-role']`; CSRF-checked. Nobody changes
 * their own roles: another administrator must (so no one raises their own, nor locks out the last
 * administrator by mistake).
 *
 * @throws AdminError `not_signed_in`, `forbidden`, `own_roles`, `not_found`; MissingCSRFError; TypeError for an undefined role
 * @example
 * ```ts
 * app.post('/admin/users/:id/roles', express.urlencoded({ extended: false }), async (req, res) => {
 *   await setUserRoles(req, req.params.id, [req.body.role], { csrfToken: req.body.csrfToken })
 *   res.redirect(`/admin/users/${req.params.id}`)
 * })
 * ```
 */
export type SetUserRolesFunction = (req: AdminCallContext, userId: string, roles: readonly string[] | null, options?: CsrfOptions) => Promise<SetRolesResult>

export function createSetUserRoles(api: Api): SetUserRolesFunction {
  const setRoles = createSetRoles(api)
  return async (given, userId, roles, options = {}) => {
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('setUserRoles(req, userId, roles): userId must be a non-empty string.')
    const { callerId } = await adminCall(api, given, 'setUserRoles()', 'set-role', options)
    if (userId === callerId) throw new AdminError('own_roles', 'setUserRoles(): nobody changes their own roles; another administrator must.')
    const result = await setRoles(userId, roles)
    if (!result.found) throw new AdminError('not_found', `setUserRoles(): there is no user ${userId}.`)
    return result
  }
}

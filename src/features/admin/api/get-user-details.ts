/** The server-side `getUserDetails(req, userId)`: one user for an administrator. */
import type { Api } from '../../../api/context.js'
import type { AdminUser } from '../types.js'
import { adminCall, adminUser, type AdminCallContext } from './context.js'

/**
 * The user with id `userId` as `listUsers` shows them, or null when there is none. Needs `user: ['list']`.
 *
 * @throws AdminError `not_signed_in`, `forbidden`; UnknownActionError (`admin` off)
 * @example
 * ```ts
 * app.get('/admin/users/:id', async (req, res) => res.json(await getUserDetails(req, req.params.id)))
 * ```
 */
export type GetUserDetailsFunction = (req: AdminCallContext, userId: string) => Promise<AdminUser | null>

export function createGetUserDetails(api: Api): GetUserDetailsFunction {
  return async (given, userId) => {
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('getUserDetails(req, userId): userId must be a non-empty string.')
    const { ctx } = await adminCall(api, given, 'getUserDetails()', 'list')
    const user = await api.config.adapter!.getUser!(userId)
    return user ? adminUser(api, ctx, user) : null
  }
}

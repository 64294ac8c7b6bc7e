/** The server-side `listUsers(req, options)`: a page of users for an administrator. */
import type { Api } from '../../../api/context.js'
import type { AdminUserPage, ListUsersOptions } from '../types.js'
import { adminCall, adminUser, type AdminCallContext } from './context.js'

/**
 * A page of users matching `search` (a whole user id, or part of an address or a name,
 * case-insensitive), ordered by address, each with how they sign in, their session count, their
 * roles and whether the second factor is on; `total` counts every match. Needs `user: ['list']`.
 *
 * @throws AdminError `not_signed_in`, `forbidden`; TypeError for a bad limit or offset; UnknownActionError (`admin` off)
 * @example
 * ```ts
 * app.get('/admin/users', async (req, res) => res.json(await listUsers(req, { search: String(req.query.q ?? ''), offset: Number(req.query.offset ?? 0) })))
 * ```
 */
export type ListUsersFunction = (req: AdminCallContext, options?: ListUsersOptions) => Promise<AdminUserPage>

export function createListUsers(api: Api): ListUsersFunction {
  return async (given, options = {}) => {
    const limit = options.limit ?? 50
    const offset = options.offset ?? 0
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new TypeError(`listUsers(): limit must be a whole number from 1 to 200; got ${String(limit)}.`)
    if (!Number.isInteger(offset) || offset < 0) throw new TypeError(`listUsers(): offset must be a whole number from 0; got ${String(offset)}.`)
    if (options.search !== undefined && (typeof options.search !== 'string' || options.search.length > 255)) throw new TypeError('listUsers(): search must be a string of at most 255 characters.')
    const { ctx } = await adminCall(api, given, 'listUsers()', 'list')
    const page = await api.config.adapter!.listUsers!({ search: options.search, limit, offset })
    const users = []
    for (const user of page.users) users.push(await adminUser(api, ctx, user))
    return { users, total: page.total }
  }
}

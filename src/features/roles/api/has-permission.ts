/**
 * The server-side `hasPermission(req, permissions)`: whether the request's signed-in user's roles
 * grant every action named. It reads the session as `auth()` does (once per request, shared with
 * it), so a check costs no query beyond that read: the roles come with the session.
 */
import { givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { Session } from '../../../types.js'
import type { AccessControl, Permissions } from '../access.js'
import { rolesOf } from '../config.js'

/**
 * Whether the request's user may do every action of `permissions`: `false` when signed out, and
 * for a session read from a credential (an API key), which carries no roles.
 *
 * @param req The request (or `{ req, res }`).
 * @throws InvalidConfigurationError when the `roles` option is off.
 * @example
 * ```ts
 * app.delete('/posts/:id', async (req, res) => {
 *   if (!(await hasPermission(req, { post: ['delete'] }))) return res.status(403).end()
 *   res.status(204).end()
 * })
 * ```
 */
export type HasPermissionFunction<A extends AccessControl = AccessControl> = (req: SessionsCallContext, permissions: Permissions<A['statements']>) => Promise<boolean>

/** What the request's session grants: the check on its roles, for `hasPermission` and `requirePermission`. */
export function sessionGrants(api: Api, session: Session | null, permissions: Permissions): boolean {
  if (!session) return false
  const roles = session.user?.roles
  return Array.isArray(roles) && rolesOf(api.config, 'hasPermission()').access.can(roles, permissions)
}

export function createHasPermission(api: Api): HasPermissionFunction {
  return async (given, permissions) => {
    rolesOf(api.config, 'hasPermission()')
    if (!permissions || typeof permissions !== 'object') throw new TypeError('hasPermission(req, permissions): permissions is an object of resource → actions, e.g. { post: ["delete"] }.')
    const { req, res } = givenRequest(given, 'hasPermission()')
    return sessionGrants(api, await api.session(req, res), permissions)
  }
}

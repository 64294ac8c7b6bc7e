/**
 * The server-side `hasPermission(req, permissions)`: whether the request's signed-in user's roles
 * grant every action named. It reads the session as `auth()` does (once per request, shared with
 * it), so a check costs no query beyond that read: the roles come with the session.
 */
import { givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { hooksOf, type PermissionSource } from '../../../composition/index.js'
import type { ResolvedConfig } from '../../../config/types.js'
import type { Session } from '../../../types.js'
import type { Permissions, Statements } from '../access.js'
import { rolesOf } from '../config.js'

/**
 * Whether the request's user may do every action of `permissions`: their roles (the `roles` option)
 * or their roles in the session's active organization (the `organizations` option) grant them all.
 * `false` when signed out, and for a session read from a credential (an API key), which carries no roles.
 *
 * @param req The request (or `{ req, res }`).
 * @throws InvalidConfigurationError when neither the `roles` nor the `organizations` option is on.
 * @example
 * ```ts
 * app.delete('/posts/:id', async (req, res) => {
 *   if (!(await hasPermission(req, { post: ['delete'] }))) return res.status(403).end()
 *   res.status(204).end()
 * })
 * ```
 */
export type HasPermissionFunction<P extends Statements = Statements> = (req: SessionsCallContext, permissions: Permissions<P>) => Promise<boolean>

/** What the request's session grants: the check on its roles, for `hasPermission` and `requirePermission`. */
export function sessionGrants(api: Api, session: Session | null, permissions: Permissions): boolean {
  if (!session) return false
  for (const source of permissionSources(api.config, 'hasPermission()')) {
    const roles = source.rolesOf(session)
    if (roles && roles.length > 0 && source.access(api.config).can(roles, permissions)) return true
  }
  return false
}

/** The roles option's own roles, the session user's `roles`: this feature's `permissionSource` hook. */
export const userRoles: PermissionSource = {
  access: (config) => rolesOf(config, 'hasPermission()').access,
  rolesOf: (session) => {
    const roles = session.user?.roles
    return Array.isArray(roles) ? roles : undefined
  },
}

const sources = new WeakMap<ResolvedConfig, readonly PermissionSource[]>()

/**
 * Where the checks find roles: the enabled features' `permissionSource` hooks, in the registry's
 * order (the `roles` option's user roles, the organizations' roles in the active organization),
 * composed once per config.
 * @throws InvalidConfigurationError when there is none.
 */
export function permissionSources(config: ResolvedConfig, what: string): readonly PermissionSource[] {
  let found = sources.get(config)
  if (!found) {
    found = Object.freeze(hooksOf(config, 'permissionSource'))
    sources.set(config, found)
  }
  if (found.length === 0) rolesOf(config, what)
  return found
}

export function createHasPermission(api: Api): HasPermissionFunction {
  return async (given, permissions) => {
    permissionSources(api.config, 'hasPermission()')
    if (!permissions || typeof permissions !== 'object') throw new TypeError('hasPermission(req, permissions): permissions is an object of resource → actions, e.g. { post: ["delete"] }.')
    const { req, res } = givenRequest(given, 'hasPermission()')
    return sessionGrants(api, await api.session(req, res), permissions)
  }
}

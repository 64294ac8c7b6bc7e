/**
 * Roles and permissions (`roles` option): statements of resources and their actions, roles as sets
 * of them (access.ts, the engine, which knows nothing of where roles come from), the user's roles
 * stored on the users table (knex.ts, the twelfth migration) and carried in the session
 * (session-field.ts), the checks `hasPermission` and `requirePermission`, and the server-side
 * `setRoles` whose change reaches every session of the user. No route: nothing a user sends sets a role.
 */
import type { Feature } from '../../composition/index.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { AccessControl, Statements } from './access.js'
import { createHasPermission, userRoles, type HasPermissionFunction } from './api/has-permission.js'
import { createRequirePermission, type RequirePermissionFunction } from './api/require-permission.js'
import { createGetRoles, createSetRoles, type GetRolesFunction, type SetRolesFunction } from './api/set-roles.js'
import { resolveRoles } from './config.js'
import { rolesField } from './session-field.js'

/**
 * The server-side functions of this feature, as `Portcullis()` returns them, typed by the `roles`
 * option's definition; the checks by `P`, its statements and any other source's (the organizations').
 */
export interface RolesApi<A extends AccessControl = AccessControl, P extends Statements = A['statements']> {
  /** Whether the request's signed-in user's roles grant every action named (no query beyond the session read). */
  hasPermission: HasPermissionFunction<P>
  /** Middleware: 401 signed out, 403 without the permission. */
  requirePermission: RequirePermissionFunction<P>
  /** Server-side only: sets a user's roles, reaching every session of theirs (docs/roles.md). */
  setRoles: SetRolesFunction<A>
  /** Server-side only: a user's stored roles, or the default ones. */
  getRoles: GetRolesFunction
}

export const rolesFeature: Feature = {
  name: 'roles',
  resolve: (config) => resolveRoles(config.roles),
  check(config) {
    const adapter = config.adapter
    if (!adapter?.getUserRoles || !adapter.setUserRoles) {
      throw new InvalidConfigurationError('The roles option needs an adapter with getUserRoles() and setUserRoles() (the users table holds each user\'s roles): KnexAdapter has them, after the twelfth migration. See docs/roles.md.')
    }
    if (config.session.strategy === 'jwt' && !config.session.store) {
      config.logger.warn(
        'RolesWithoutStore',
        'roles with JWT sessions and no session.store: a role taken away by setRoles() stands in the user\'s session tokens until they expire (jwt.maxAge). Configure session.store to end them at once, or use database sessions. See docs/roles.md.',
      )
    }
  },
  api: (api): RolesApi => ({
    hasPermission: createHasPermission(api),
    requirePermission: createRequirePermission(api),
    setRoles: createSetRoles(api),
    getRoles: createGetRoles(api),
  }),
  hooks: { sessionUserField: rolesField, permissionSource: userRoles },
  adapterMethods: ['getUserRoles', 'setUserRoles'],
  events: ['roleChanged'],
}

/**
 * The roles wing's option, and what it adds to the shared types (declaration merging; `src/index.ts`
 * re-exports this module): the `roles` option, the adapter's two methods, the `roleChanged` event,
 * the cause of the sessions a role change ends, and the session user's `roles`.
 */
import type { Awaitable } from '../../types.js'
import type { AccessControl } from './access.js'

/** The `roles` option in full: the definition, and the role of a user who has none stored. */
export interface RolesOptions<A extends AccessControl = AccessControl> {
  /** The statements and roles (`defineAccess`). */
  access: A
  /** The roles of a user whose stored roles are empty (every user before their first `setRoles`). Default `['user']`. */
  defaultRoles?: readonly A['roleNames'][number][] | undefined
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * Off by default. Roles and permissions: `defineAccess({ statements, roles })`, or `{ access,
     * defaultRoles }`. The user's roles are stored on the users table (the twelfth migration) and
     * carried in the session (`session.user.roles`); `hasPermission` and `requirePermission` check
     * them without a query. See docs/roles.md.
     */
    roles?: AccessControl | RolesOptions | undefined
  }
}

declare module '../../types.js' {
  interface SessionUser {
    /**
     * With the `roles` option: the user's roles as the session carries them (frozen), from the users
     * table (database sessions: on every read; JWT sessions: as of the sign-in). No callback, and no
     * client `update()`, changes them. Absent without the option.
     */
    roles?: readonly string[] | undefined
  }

  interface Adapter {
    /** The user's stored roles (comma-separated in KnexAdapter's `roles` column); `null` when none are stored or there is no such user. */
    getUserRoles?(userId: string): Promise<string[] | null>
    /** Stores the user's roles (`null`: none, the default roles apply); `false` when there is no such user. */
    setUserRoles?(userId: string, roles: readonly string[] | null): Promise<boolean>
  }

  // A role change ends every JWT session of the user when there is a session store (docs/roles.md).
  interface SessionRevocationCauses {
    rolesChanged: true
  }

  interface EventsOptions {
    /**
     * `setRoles()` changed the user's roles (`previous`: before; `null` for the default roles). With
     * JWT sessions and a session store, every session of the user was ended (`sessionRevoked` for each).
     */
    roleChanged?: ((message: { userId: string; roles: readonly string[] | null; previous: readonly string[] | null }) => Awaitable<void>) | undefined
  }
}

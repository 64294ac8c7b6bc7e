/**
 * The admin wing's option and records, and what it adds to the shared types: the adapter's user
 * listing, the `admin` option and its cause of ended sessions (TypeScript declaration merging;
 * `src/index.ts` re-exports this module).
 */
import type { AdapterUser } from '../../types.js'

/** One user as the admin API shows them: who, how they sign in, how many sessions, the second factor. */
export interface AdminUser {
  id: string
  name: string | null
  email: string | null
  emailVerified: Date | null
  /** The user's roles (the `roles` option), the default ones when none are stored. */
  roles: readonly string[]
  /** The provider ids of their accounts (`github`, `webauthn`, …), and `password` when they have one. */
  signInMethods: readonly string[]
  /** Their sessions that have not expired (database sessions, or JWT sessions in `session.store`); null with JWT sessions and no store (nothing records them). */
  sessions: number | null
  /** Whether the second factor (TOTP) is on. */
  twoFactor: boolean
}

/** A page of users. */
export interface AdminUserPage {
  users: AdminUser[]
  /** How many users match, on every page. */
  total: number
}

/** What `listUsers` takes. */
export interface ListUsersOptions {
  /** Part of an address or a name (case-insensitive), or a whole user id. */
  search?: string | undefined
  /** At most this many (default 50, at most 200). */
  limit?: number | undefined
  /** Skip this many (the next page: offset + limit). */
  offset?: number | undefined
}

declare module '../../types.js' {
  interface Adapter {
    /** Users matching `search` (an id, or part of an address or a name), by address, and how many match. */
    listUsers?(options: { search?: string | undefined; limit: number; offset: number }): Promise<{ users: AdapterUser[]; total: number }>
  }

  // An administrator ended the user's sessions (`revokeUserSessions()`). No TSDoc: the interface's own comment is the core's.
  interface SessionRevocationCauses {
    adminRevoked: true
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * Off by default. The admin API (`listUsers`, `getUserDetails`, `setUserRoles`,
     * `revokeUserSessions`), each checking the caller's permission: needs the `roles` option, with
     * `adminStatements` among its statements. See docs/admin.md.
     */
    admin?: boolean | undefined
  }
}

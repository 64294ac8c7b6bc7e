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
  /** The user's ban while it holds (an expired one is none), else null. */
  ban: UserBan | null
}

/** A user's ban: when, why (shown to nobody but administrators), until when (null: until lifted). */
export interface UserBan {
  bannedAt: Date
  reason: string | null
  expiresAt: Date | null
}

/** What `banUser` takes. */
export interface BanUserOptions {
  /** Why (at most 500 characters), for the administrators; never shown to the user. */
  reason?: string | undefined
  /** Seconds until the ban lifts itself; none: until `unbanUser`. */
  expiresIn?: number | undefined
  csrfToken?: string | undefined
  skipCsrfCheck?: boolean | undefined
}

/** What `createUser` takes. */
export interface CreateUserOptions {
  /** The new user's address (normalised as every sign-in does). */
  email: string
  /** Their name (at most 200 characters). */
  name?: string | undefined
  /** Mail them the password provider's reset link, with which they set a password (default true). */
  sendPasswordLink?: boolean | undefined
  csrfToken?: string | undefined
  skipCsrfCheck?: boolean | undefined
}

/** The `admin` option as an object (`true` is `{}`). */
export interface AdminOptions {
  /** The longest impersonation, in seconds, from 60 to 86,400 (default 3600: an hour). */
  impersonationMaxAge?: number | undefined
  /**
   * Whether a user whose roles grant an admin action (any of `adminStatements`) may be
   * impersonated (default false: an administrator's account is not someone else's to act in).
   */
  impersonateAdmins?: boolean | undefined
}

/** What `impersonateUser` takes. */
export interface ImpersonateUserOptions {
  /** Seconds the impersonation lasts, at most `admin.impersonationMaxAge` (its default). */
  expiresIn?: number | undefined
  csrfToken?: string | undefined
  skipCsrfCheck?: boolean | undefined
}

/** What `updateUser` takes: the fields to change (left out: unchanged). */
export interface UpdateUserOptions {
  /** Their new name (at most 200 characters); `null` or `''` removes it. */
  name?: string | null | undefined
  /** Their new address (normalised as every sign-in does); not verified unless `emailVerified` is true. */
  email?: string | undefined
  /** The administrator vouches for the address: it counts as verified now. Default false. */
  emailVerified?: boolean | undefined
  csrfToken?: string | undefined
  skipCsrfCheck?: boolean | undefined
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
    /** Bans the user (replacing a ban they had); false when there is no such user. */
    banUser?(userId: string, ban: { at: Date; reason: string | null; expiresAt: Date | null }): Promise<boolean>
    /** Lifts the user's ban; false when they had none. */
    unbanUser?(userId: string): Promise<boolean>
    /** The user's stored ban, expired or not; null when none (or no such user). */
    getUserBan?(userId: string): Promise<UserBan | null>
  }

  interface EventsOptions {
    /** An administrator banned the user (`banUser()`): every session ended, every sign-in and API key refused until `expiresAt` (null: until lifted). */
    userBanned?: ((message: { userId: string; reason: string | null; expiresAt: Date | null }) => Awaitable<void>) | undefined
    /** An administrator lifted the user's ban (`unbanUser()`). */
    userUnbanned?: ((message: { userId: string }) => Awaitable<void>) | undefined
    /** An administrator (`impersonatedBy`) started a session as the user (`impersonateUser()`), ending at `expiresAt`. */
    impersonationStarted?: ((message: { userId: string; impersonatedBy: string; expiresAt: Date }) => Awaitable<void>) | undefined
    /** The administrator stopped impersonating the user (`stopImpersonating()`), back in their own session. */
    impersonationStopped?: ((message: { userId: string; impersonatedBy: string }) => Awaitable<void>) | undefined
  }

  // An administrator ended the user's sessions (`revokeUserSessions()`). No TSDoc: the interface's own comment is the core's.
  interface SessionRevocationCauses {
    adminRevoked: true
  }

  interface CookiesOptions {
    /**
     * While an administrator impersonates a user (`impersonateUser()`): the administrator's own
     * session cookie, put back when they stop (`authjs.impersonator-session`, until the impersonation ends). Not an Auth.js cookie.
     */
    impersonatorSession: CookieOption
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * Off by default. The admin API (`listUsers`, `getUserDetails`, `setUserRoles`,
     * `revokeUserSessions`, `banUser`, `createUser`, `updateUser`, …) and the built-in admin pages
     * (`/admin`), each checking the caller's permission: needs the `roles` option, with
     * `adminStatements` among its statements. See docs/admin.md.
     */
    admin?: boolean | AdminOptions | undefined
  }
}

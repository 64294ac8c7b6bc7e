/**
 * The admin API (`admin` option): an administrator finds users (`listUsers`, `getUserDetails`),
 * sets their roles (`setUserRoles`), signs them out everywhere (`revokeUserSessions`) and bans them
 * (`banUser`, `unbanUser`: sign-ins refused before any session, by the `beforeSession` hook), adds,
 * corrects and deletes them (`createUser`, `updateUser`, `deleteUser`), helps them back in
 * (`resetUserTwoFactor`, `sendPasswordResetLink`) and impersonates them (`impersonateUser`,
 * `stopImpersonating`, impersonation.ts), each call checking the caller's permission through the
 * roles wing (`user: [action]` of the `adminStatements`), and the ones that change something
 * CSRF-checked. The built-in pages (`/admin`, `/admin/user`: routes/, pages/) are forms over those
 * same functions.
 */
import type { Feature } from '../../composition/index.js'
import { createBanUser, createUnbanUser, type BanUserFunction, type UnbanUserFunction } from './api/ban-user.js'
import { activeBan } from './api/context.js'
import { createCreateUser, type CreateUserFunction } from './api/create-user.js'
import { createDeleteUser, type DeleteUserFunction } from './api/delete-user.js'
import { createGetUserDetails, type GetUserDetailsFunction } from './api/get-user-details.js'
import { createResetUserTwoFactor, createSendPasswordResetLink, type ResetUserTwoFactorFunction, type SendPasswordResetLinkFunction } from './api/help-user.js'
import { createListUsers, type ListUsersFunction } from './api/list-users.js'
import { createListUserSessions, type ListUserSessionsFunction } from './api/list-user-sessions.js'
import { createRevokeUserSessions, type RevokeUserSessionsFunction } from './api/revoke-user-sessions.js'
import { createSetUserRoles, type SetUserRolesFunction } from './api/set-user-roles.js'
import { createImpersonateUser, createStopImpersonating, type ImpersonateUserFunction, type StopImpersonatingFunction } from './api/impersonate.js'
import { createUpdateUser, type UpdateUserFunction } from './api/update-user.js'
import { assertAdmin, resolveAdmin } from './config.js'
import { UserBannedError } from './errors.js'
import { recordApi } from './instance.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface AdminApi {
  /** A page of users, searched by id, address or name (`user: ['list']`). */
  listUsers: ListUsersFunction
  /** One user, with how they sign in, their sessions and the second factor (`user: ['list']`). */
  getUserDetails: GetUserDetailsFunction
  /** A user's unexpired sessions, when and where from (`user: ['list']`); null when nothing records them. */
  listUserSessions: ListUserSessionsFunction
  /** Sets another user's roles (`user: ['set-role']`, CSRF-checked). */
  setUserRoles: SetUserRolesFunction
  /** Ends every session of a user (`user: ['revoke-sessions']`, CSRF-checked). */
  revokeUserSessions: RevokeUserSessionsFunction
  /** Bans a user: sessions ended, sign-ins and API keys refused, until it expires or is lifted (`user: ['ban']`, CSRF-checked). */
  banUser: BanUserFunction
  /** Lifts a user's ban (`user: ['ban']`, CSRF-checked). */
  unbanUser: UnbanUserFunction
  /** Creates a user, mailed a link to set their password (`user: ['create']`, CSRF-checked). */
  createUser: CreateUserFunction
  /** Changes a user's name or address, an address set so unverified unless vouched for (`user: ['update']`, CSRF-checked). */
  updateUser: UpdateUserFunction
  /** Deletes a user at once, every wing's rows in one transaction (`user: ['delete']`, the `account` option, CSRF-checked). */
  deleteUser: DeleteUserFunction
  /** Removes a user's second factor (`user: ['reset-two-factor']`, the `twoFactor` option, CSRF-checked). */
  resetUserTwoFactor: ResetUserTwoFactorFunction
  /** Mails a user a password reset link (`user: ['send-reset-link']`, a password provider, CSRF-checked). */
  sendPasswordResetLink: SendPasswordResetLinkFunction
  /** Signs the browser in as a user for a limited time, the administrator's own session kept (`user: ['impersonate']`, CSRF-checked). */
  impersonateUser: ImpersonateUserFunction
  /** Ends the request's impersonation: back to the administrator's own session (CSRF-checked). */
  stopImpersonating: StopImpersonatingFunction
}

export const adminFeature: Feature = {
  name: 'admin',
  // The account, password, two-factor and audit wings' modules are imported by the functions and pages that reach them, when they are on.
  requires: ['roles', 'account', 'password', 'two-factor', 'audit'],
  resolve: (config) => resolveAdmin(config.admin),
  check: assertAdmin,
  // Its impersonations are sessions on another's behalf: the database read asks for their column.
  impersonates: true,
  // The built-in pages: each action calls the admin function below (the permission checked there, once).
  routes: [
    { method: 'GET', path: '/admin', page: true, load: async () => (await import('./routes/users.js')).usersPage },
    { method: 'GET', path: '/admin/user', page: true, load: async () => (await import('./routes/user.js')).userPageAction },
    { method: 'POST', path: '/admin/user/update', csrf: true, load: async () => (await import('./routes/update.js')).updateUserAction },
    { method: 'POST', path: '/admin/user/roles', csrf: true, load: async () => (await import('./routes/roles.js')).setRolesAction },
    { method: 'POST', path: '/admin/user/sessions', csrf: true, load: async () => (await import('./routes/sessions.js')).revokeSessionsAction },
    { method: 'POST', path: '/admin/user/ban', csrf: true, load: async () => (await import('./routes/ban.js')).banUserAction },
    { method: 'POST', path: '/admin/user/unban', csrf: true, load: async () => (await import('./routes/unban.js')).unbanUserAction },
    { method: 'POST', path: '/admin/user/two-factor', csrf: true, load: async () => (await import('./routes/two-factor.js')).resetTwoFactorAction },
    { method: 'POST', path: '/admin/user/reset-link', csrf: true, load: async () => (await import('./routes/reset-link.js')).sendResetLinkAction },
    { method: 'POST', path: '/admin/user/delete', csrf: true, load: async () => (await import('./routes/delete.js')).deleteUserAction },
    { method: 'POST', path: '/admin/user/impersonate', csrf: true, load: async () => (await import('./routes/impersonate.js')).impersonateAction },
    { method: 'GET', path: '/admin/impersonation', page: true, load: async () => (await import('./routes/impersonation.js')).impersonationPageAction },
    { method: 'POST', path: '/admin/impersonation/stop', csrf: true, load: async () => (await import('./routes/impersonation.js')).stopImpersonationAction },
  ],
  off: 'The admin pages are off: set admin: true (with the roles option) in the Portcullis config. See docs/admin.md.',
  cookies: { impersonatorSession: { name: 'authjs.impersonator-session', maxAge: 24 * 60 * 60 } },
  api: (given): AdminApi => {
    const api = recordApi(given)
    return {
      listUsers: createListUsers(api),
      getUserDetails: createGetUserDetails(api),
      listUserSessions: createListUserSessions(api),
      setUserRoles: createSetUserRoles(api),
      revokeUserSessions: createRevokeUserSessions(api),
      banUser: createBanUser(api),
      unbanUser: createUnbanUser(api),
      createUser: createCreateUser(api),
      updateUser: createUpdateUser(api),
      deleteUser: createDeleteUser(api),
      resetUserTwoFactor: createResetUserTwoFactor(api),
      sendPasswordResetLink: createSendPasswordResetLink(api),
      impersonateUser: createImpersonateUser(api),
      stopImpersonating: createStopImpersonating(api),
    }
  },
  hooks: {
    // Every sign-in method's finish, before the session: a banned user is refused (an expired ban lifts itself).
    beforeSession: async (ctx, user) => {
      const id = (user as { id?: unknown }).id
      if (typeof id !== 'string') return
      if (activeBan(await ctx.config.adapter!.getUserBan!(id), Date.now())) throw new UserBannedError(`User ${id} is banned: the sign-in is refused.`)
    },
    // Every built-in page, during an impersonation: who is impersonated, and the way out.
    pageBanner: async (ctx) => (await import('./routes/impersonation.js')).impersonationBannerOf(ctx),
  },
  adapterMethods: ['listUsers', 'createUser', 'updateUser', 'getUser', 'getUserByEmail', 'getAccountsByUserId', 'banUser', 'unbanUser', 'getUserBan', 'getUserRoles'],
  events: ['userBanned', 'userUnbanned', 'createUser', 'updateUser', 'emailChanged', 'impersonationStarted', 'impersonationStopped'],
  errors: ['Admin', 'UserBanned'],
}

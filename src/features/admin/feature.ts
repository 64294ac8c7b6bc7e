/**
 * The admin API (`admin` option): an administrator finds users (`listUsers`, `getUserDetails`),
 * sets their roles (`setUserRoles`) and signs them out everywhere (`revokeUserSessions`), each call
 * checking the caller's permission through the roles wing (`user: ['list' | 'set-role' |
 * 'revoke-sessions']`, the `adminStatements`), and the ones that change something CSRF-checked.
 * Server-side functions only, no route or page yet.
 */
import type { Feature } from '../../composition/index.js'
import { createGetUserDetails, type GetUserDetailsFunction } from './api/get-user-details.js'
import { createListUsers, type ListUsersFunction } from './api/list-users.js'
import { createRevokeUserSessions, type RevokeUserSessionsFunction } from './api/revoke-user-sessions.js'
import { createSetUserRoles, type SetUserRolesFunction } from './api/set-user-roles.js'
import { assertAdmin, resolveAdmin } from './config.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface AdminApi {
  /** A page of users, searched by id, address or name (`user: ['list']`). */
  listUsers: ListUsersFunction
  /** One user, with how they sign in, their sessions and the second factor (`user: ['list']`). */
  getUserDetails: GetUserDetailsFunction
  /** Sets another user's roles (`user: ['set-role']`, CSRF-checked). */
  setUserRoles: SetUserRolesFunction
  /** Ends every session of a user (`user: ['revoke-sessions']`, CSRF-checked). */
  revokeUserSessions: RevokeUserSessionsFunction
}

export const adminFeature: Feature = {
  name: 'admin',
  requires: ['roles'],
  resolve: (config) => resolveAdmin(config.admin),
  check: assertAdmin,
  api: (api): AdminApi => ({
    listUsers: createListUsers(api),
    getUserDetails: createGetUserDetails(api),
    setUserRoles: createSetUserRoles(api),
    revokeUserSessions: createRevokeUserSessions(api),
  }),
  adapterMethods: ['listUsers', 'getUser', 'getAccountsByUserId'],
  errors: ['Admin'],
}

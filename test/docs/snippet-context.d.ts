/**
 * What the docs' TypeScript snippets may use without declaring it: the app they are read into, as
 * the README's Usage section sets it up (an Express `app`, the functions `Portcullis()` returned, a
 * Knex `db`), and the app's own helpers the snippets call. Everything that comes from a package
 * (Portcullis itself, its providers, its error classes) must be imported by the snippet, as a reader
 * copying it would have to.
 */
import type { Express, RequestHandler } from 'express'
import type { Knex } from 'knex'
import type { AuthFunction, Provider, SignInFunction, SignOutFunction, GetCsrfTokenFunction, Adapter, User, ListSessionsFunction, RevokeSessionFunction, RevokeOtherSessionsFunction, SignOutEverywhereFunction, ListPasskeysFunction, RemovePasskeyFunction, SignUpFunction, ChangePasswordFunction, ChangeUsernameFunction, EnrollTotpFunction, VerifyTotpFunction, DisableTotpFunction, RegenerateRecoveryCodesFunction, ResetTwoFactorFunction, RequireScopesFunction, CreateApiKeyFunction, ListApiKeysFunction, RevokeApiKeyFunction, RotateApiKeyFunction, RequireRecentSignInFunction, DeleteAccountFunction, ChangeEmailFunction, ListAuditEventsFunction, ExportAuditEventsFunction, ListUsersFunction, GetUserDetailsFunction, SetUserRolesFunction, RevokeUserSessionsFunction, HasPermissionFunction, RequirePermissionFunction, SetRolesFunction, GetRolesFunction, CreateOrganizationFunction, ListOrganizationsFunction, GetOrganizationFunction, UpdateOrganizationFunction, DeleteOrganizationFunction, SetActiveOrganizationFunction, GetActiveOrganizationFunction, ListMembersFunction, UpdateMemberRolesFunction, RemoveMemberFunction, LeaveOrganizationFunction, AddMemberFunction, TeamFunctions, CreateSsoConnectionFunction, AddSsoDomainFunction, VerifySsoDomainFunction, CreateSsoScimTokenFunction } from 'portcullis'

declare global {
  const app: Express
  const db: Knex
  const auth: AuthFunction
  const signIn: SignInFunction
  const signOut: SignOutFunction
  const getCsrfToken: GetCsrfTokenFunction
  const createSsoConnection: CreateSsoConnectionFunction
  const addSsoDomain: AddSsoDomainFunction
  const verifySsoDomain: VerifySsoDomainFunction
  const createSsoScimToken: CreateSsoScimTokenFunction
  const listSessions: ListSessionsFunction
  const revokeSession: RevokeSessionFunction
  const revokeOtherSessions: RevokeOtherSessionsFunction
  const signOutEverywhere: SignOutEverywhereFunction
  const listPasskeys: ListPasskeysFunction
  const removePasskey: RemovePasskeyFunction
  const signUp: SignUpFunction
  const changePassword: ChangePasswordFunction
  const changeUsername: ChangeUsernameFunction
  const enrollTotp: EnrollTotpFunction
  const verifyTotp: VerifyTotpFunction
  const disableTotp: DisableTotpFunction
  const regenerateRecoveryCodes: RegenerateRecoveryCodesFunction
  const resetTwoFactor: ResetTwoFactorFunction
  const requireScopes: RequireScopesFunction
  const createApiKey: CreateApiKeyFunction
  const listApiKeys: ListApiKeysFunction
  const revokeApiKey: RevokeApiKeyFunction
  const rotateApiKey: RotateApiKeyFunction
  const requireRecentSignIn: RequireRecentSignInFunction
  const deleteAccount: DeleteAccountFunction
  const changeEmail: ChangeEmailFunction
  const listAuditEvents: ListAuditEventsFunction
  const exportAuditEvents: ExportAuditEventsFunction
  const listUsers: ListUsersFunction
  const getUserDetails: GetUserDetailsFunction
  const setUserRoles: SetUserRolesFunction
  const revokeUserSessions: RevokeUserSessionsFunction
  const hasPermission: HasPermissionFunction
  const requirePermission: RequirePermissionFunction
  const setRoles: SetRolesFunction
  const getRoles: GetRolesFunction
  const createOrganization: CreateOrganizationFunction
  const listOrganizations: ListOrganizationsFunction
  const getOrganization: GetOrganizationFunction
  const updateOrganization: UpdateOrganizationFunction
  const deleteOrganization: DeleteOrganizationFunction
  const setActiveOrganization: SetActiveOrganizationFunction
  const getActiveOrganization: GetActiveOrganizationFunction
  const listMembers: ListMembersFunction
  const updateMemberRoles: UpdateMemberRolesFunction
  const removeMember: RemoveMemberFunction
  const leaveOrganization: LeaveOrganizationFunction
  const createTeam: TeamFunctions['createTeam']
  const addTeamMember: TeamFunctions['addTeamMember']
  const listTeamMembers: TeamFunctions['listTeamMembers']
  const addMember: AddMemberFunction
  /** The app's own check that the signed-in user is an administrator, as an admin route's snippet calls it. */
  const requireAdmin: RequestHandler
  const providers: Provider[]
  const adapter: Adapter
  /** The app's own user store and lock-out rule, as a credentials snippet calls them. */
  const users: { verify(username: string, password: string): Promise<User | null> }
  function isLocked(username: string): Promise<boolean>
  const passwords: { verify(email: string, password: string): Promise<boolean> }
  /** The app's own mail API client, as an e-mail snippet calls it. */
  const mailApi: { send(message: { to: string; subject?: string; text: string }): Promise<void> }
  const clientID: string
  const clientSecret: string
}

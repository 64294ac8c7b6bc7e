/**
 * Portcullis: authentication for Express 4/5, Connect and `node:http`.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import Portcullis from 'portcullis'
 * import Credentials from 'portcullis/providers/credentials'
 *
 * const { handlers, auth } = Portcullis({
 *   providers: [Credentials({ authorize: async ({ username }) => (username === 'ada' ? { id: '1', name: 'Ada' } : null) })],
 * })
 * const app = express()
 * app.use('/api/auth', handlers)
 * app.get('/me', async (req, res) => res.json(await auth(req, res)))
 * ```
 * @see spec/auth-library-spec.md §4.6
 */
import { resolveConfig } from './config/resolve.js'
import { createAuth, type CoreApi } from './api/index.js'
import { hooksOf } from './composition/index.js'
import { FEATURES } from './features/index.js'
import type { AccountApi } from './features/account/feature.js'
import type { ApiKeysApi } from './features/api-keys/feature.js'
import type { AuthorizationServerApi } from './features/authorization-server/feature.js'
import type { McpApi } from './features/mcp/feature.js'
import type { AuditApi } from './features/audit/feature.js'
import type { AdminApi } from './features/admin/feature.js'
import type { OAuthApi } from './features/oauth/feature.js'
import type { OrganizationsApi } from './features/organizations/feature.js'
import type { PasskeyApi } from './features/passkey/feature.js'
import type { PasswordApi } from './features/password/feature.js'
import type { AccessControl } from './features/roles/access.js'
import type { RolesApi } from './features/roles/feature.js'
import type { RolesOptions } from './features/roles/types.js'
import type { Statements } from './features/roles/access.js'
import type { organizationStatements } from './features/organizations/access.js'
import type { OrganizationsOptions } from './features/organizations/types.js'
import type { SessionsApi } from './features/sessions/feature.js'
import type { SsoApi } from './features/sso/feature.js'
import type { TwoFactorApi } from './features/two-factor/feature.js'
import { RequestScope } from './http/request-scope.js'
import { createHandlers, type Handlers } from './http/router.js'
import type { PortcullisConfig } from './config/types.js'

/**
 * What `Portcullis(config)` returns (spec §2.3): the router, the core's functions (`auth`, `signIn`,
 * `signOut`, `getCsrfToken`, `unlinkAccount`) and each feature's; the roles' checks typed by the
 * `roles` option's definition (`A`) and the `organizations` option's statements (`O`).
 */
export interface PortcullisResult<A extends AccessControl = AccessControl, O extends Statements = {}>
  extends CoreApi,
    OAuthApi,
    SessionsApi,
    PasskeyApi,
    PasswordApi,
    TwoFactorApi,
    ApiKeysApi,
    AccountApi,
    RolesApi<A, CheckedStatements<A, O>>,
    OrganizationsApi,
    SsoApi,
    AuditApi,
    AdminApi,
    AuthorizationServerApi,
    McpApi {
  /** Request handler for the auth routes: `app.use('/api/auth', handlers)`. */
  handlers: Handlers
}

/**
 * What `hasPermission` and `requirePermission` accept: the `roles` option's statements, and with
 * `organizations.statements` given, those and the organizations' own (`organizationStatements`) too.
 */
export type CheckedStatements<A extends AccessControl, O extends Statements> = keyof O extends never ? A['statements'] : A['statements'] & O & typeof organizationStatements

/**
 * Initialises Portcullis once: resolves and freezes the configuration (the object passed in is
 * not modified), derives the session keys, and returns the router and the session functions.
 *
 * @param config Providers, secret, session options, callbacks, events, pages, theme.
 * @throws MissingSecretError in production (`NODE_ENV=production`) when no secret is set.
 * @throws InvalidConfigurationError when an option cannot work; the message says what to change.
 */
export default function Portcullis<A extends AccessControl = AccessControl, const O extends Statements = {}>(
  config: PortcullisConfig & { roles?: A | RolesOptions<A> | undefined; organizations?: OrganizationsOptions<O> | boolean | undefined },
): PortcullisResult<A, O> {
  const resolved = resolveConfig(config, FEATURES)
  const requestScope = new RequestScope()
  const handlers = createHandlers(resolved, requestScope)
  const api = createAuth(resolved, requestScope) as unknown as Omit<PortcullisResult<A, O>, 'handlers'>
  for (const started of hooksOf(resolved, 'started')) started(resolved)
  return { handlers, ...api }
}

export * from './errors.js'
export * from './features/account/errors.js'
export * from './features/api-keys/errors.js'
export * from './features/audit/errors.js'
export * from './features/admin/errors.js'
export * from './features/credentials/errors.js'
export * from './features/oauth/errors.js'
export * from './features/passkey/errors.js'
export * from './features/password/errors.js'
export * from './features/organizations/errors.js'
export * from './features/sso/errors.js'
export type { AccountApi } from './features/account/feature.js'
export type { AuditApi } from './features/audit/feature.js'
export type { AdminApi } from './features/admin/feature.js'
export type { AdminCallContext } from './features/admin/api/context.js'
export type { ListUsersFunction } from './features/admin/api/list-users.js'
export type { GetUserDetailsFunction } from './features/admin/api/get-user-details.js'
export type { ListUserSessionsFunction } from './features/admin/api/list-user-sessions.js'
export type { SetUserRolesFunction } from './features/admin/api/set-user-roles.js'
export type { RevokeUserSessionsFunction } from './features/admin/api/revoke-user-sessions.js'
export type { BanUserFunction, UnbanUserFunction } from './features/admin/api/ban-user.js'
export type { CreateUserFunction } from './features/admin/api/create-user.js'
export type { UpdateUserFunction } from './features/admin/api/update-user.js'
export type { DeleteUserFunction } from './features/admin/api/delete-user.js'
export type { ResetUserTwoFactorFunction, SendPasswordResetLinkFunction } from './features/admin/api/help-user.js'
export type { ImpersonateUserFunction, StopImpersonatingFunction } from './features/admin/api/impersonate.js'
export { adminStatements } from './features/admin/config.js'
export { organizationStatements } from './features/organizations/access.js'
export type { OrganizationsApi } from './features/organizations/feature.js'
export type { CreateOrganizationFunction, CreateOrganizationOptions } from './features/organizations/api/create-organization.js'
export type { GetOrganizationFunction, ListOrganizationsFunction } from './features/organizations/api/list-organizations.js'
export type { DeleteOrganizationFunction, UpdateOrganizationFunction, UpdateOrganizationOptions } from './features/organizations/api/update-organization.js'
export type { LeaveOrganizationFunction, ListMembersFunction, RemoveMemberFunction, UpdateMemberRolesFunction } from './features/organizations/api/members.js'
export type { ActiveOrganizationDetails, GetActiveOrganizationFunction, SetActiveOrganizationFunction } from './features/organizations/api/active-organization.js'
export type { AddMemberFunction } from './features/organizations/api/add-member.js'
export type { TeamFunctions } from './features/organizations/api/teams.js'
export type { OrganizationsCallContext } from './features/organizations/api/context.js'
export type { ApiKeyOwnerOption } from './features/api-keys/api/context.js'
export type { InviteMemberFunction, InviteMemberOptions } from './features/organizations/api/invite-member.js'
export type { ListInvitationsFunction } from './features/organizations/api/list-invitations.js'
export type { CancelInvitationFunction } from './features/organizations/api/cancel-invitation.js'
export type { ResendInvitationFunction } from './features/organizations/api/resend-invitation.js'
export type { ListMyInvitationsFunction } from './features/organizations/api/list-my-invitations.js'
export type { AcceptInvitationFunction } from './features/organizations/api/accept-invitation.js'
export type { DeclineInvitationFunction } from './features/organizations/api/decline-invitation.js'
export type { NewInvitation, SentInvitation } from './features/organizations/invitations.js'
export type { SsoApi } from './features/sso/feature.js'
export type { SsoCallContext } from './features/sso/api/context.js'
export type { CreateSsoConnectionFunction, CreateSsoConnectionOptions, DeleteSsoConnectionFunction, ListSsoConnectionsFunction, UpdateSsoConnectionFunction, UpdateSsoConnectionOptions } from './features/sso/api/connections.js'
export type { AddSsoDomainFunction, ListSsoDomainsFunction, MarkSsoDomainVerifiedFunction, RemoveSsoDomainFunction, VerifySsoDomainFunction } from './features/sso/api/domains.js'
export type { CreateSsoScimTokenFunction, RevokeSsoScimTokenFunction } from './features/sso/api/scim-token.js'
export type { NewSsoConnection, SsoConnectionChanges } from './features/sso/manage.js'
export type { AdapterSsoConnection, AdapterSsoDomain, OidcConnectionSettings, SamlConnectionSettings, ScimSettings, SsoConnection, SsoDomain } from './features/sso/types.js'
export type { ListAuditEventsFunction } from './features/audit/api/list-audit-events.js'
export type { ExportAuditEventsFunction } from './features/audit/api/export-audit-events.js'
export type { DeleteAccountFunction, DeleteAccountOptions } from './features/account/api/delete-account.js'
export type { ChangeEmailFunction, ChangeEmailOptions } from './features/account/api/change-email.js'
export type { RecentSignInMiddleware, RecentSignInOptions, RequireRecentSignInFunction } from './features/account/api/require-recent-sign-in.js'
export type { RecentSignIn } from './features/account/recent.js'
export type * from './types.js'
// What each wing adds to the types above (declaration merging): its adapter methods, events and options.
export type * from './features/account/types.js'
export type * from './features/api-keys/types.js'
export type * from './features/audit/types.js'
export type * from './features/authorization-server/types.js'
export type * from './features/admin/types.js'
export type * from './features/credentials/types.js'
export type * from './features/email/types.js'
export type * from './features/oauth/types.js'
export type * from './features/passkey/types.js'
export type * from './features/password/types.js'
export type * from './features/organizations/types.js'
export type * from './features/prune/types.js'
export type * from './features/roles/types.js'
export type * from './features/two-factor/types.js'
export type { PortcullisConfig, Provider, ProviderConfigs, ProviderInput } from './config/types.js'
export type { LogFields, LoggerInstance, LoggerOption, LogLevel, LogRecord } from './logger.js'
export type {
  AuthFunction,
  AuthenticatedRequest,
  CredentialAuth,
  CsrfOptions,
  GetCsrfTokenFunction,
  SessionsCallContext,
  SignInFunction,
  SignInOptions,
  SignOutFunction,
  SignOutOptions,
  UnlinkAccountFunction,
  UnlinkOptions,
  RequireScopesFunction,
  ScopesMiddleware,
} from './api/index.js'
export type { GetAccessTokenFunction, GetAccessTokenOptions } from './features/oauth/api/get-access-token.js'
export type { ListSessionsFunction } from './features/sessions/api/list-sessions.js'
export { defineAccess } from './features/roles/access.js'
export type { AccessControl, AccessDefinition, DefaultRoleName, Permissions, Statements } from './features/roles/access.js'
export type { RolesApi } from './features/roles/feature.js'
export type { HasPermissionFunction } from './features/roles/api/has-permission.js'
export type { PermissionMiddleware, RequirePermissionFunction } from './features/roles/api/require-permission.js'
export type { GetRolesFunction, SetRolesFunction, SetRolesResult } from './features/roles/api/set-roles.js'
export type { RevokeSessionFunction } from './features/sessions/api/revoke-session.js'
export type { RevokeOtherSessionsFunction } from './features/sessions/api/revoke-other-sessions.js'
export type { SignOutEverywhereFunction } from './features/sessions/api/sign-out-everywhere.js'
export type { ListPasskeysFunction } from './features/passkey/api/list-passkeys.js'
export type { PasskeysCallContext } from './features/passkey/api/context.js'
export type { RemovePasskeyFunction } from './features/passkey/api/remove-passkey.js'
export type { ChangePasswordFunction, ChangePasswordOptions } from './features/password/api/change-password.js'
export type { ChangeUsernameFunction, ChangeUsernameOptions } from './features/password/api/change-username.js'
export type { PasswordCallContext } from './features/password/api/context.js'
export type { SignUpFunction, SignUpOptions } from './features/password/api/sign-up.js'
export type { DisableTotpFunction } from './features/two-factor/api/disable-totp.js'
export type { EnrollTotpFunction } from './features/two-factor/api/enroll-totp.js'
export type { RegenerateRecoveryCodesFunction } from './features/two-factor/api/regenerate-recovery-codes.js'
export type { ResetTwoFactorFunction } from './features/two-factor/api/reset-two-factor.js'
export type { TwoFactorCallContext, TwoFactorCodeOptions } from './features/two-factor/api/context.js'
export type { TotpVerification, VerifyTotpFunction } from './features/two-factor/api/verify-totp.js'
export type { TotpEnrollment } from './features/two-factor/factor.js'
export type { Handlers, NextFunction } from './http/router.js'
export type { ApiKeysCallContext } from './features/api-keys/api/context.js'
export type { CreateApiKeyFunction, CreateApiKeyOptions } from './features/api-keys/api/create-api-key.js'
export type { ListApiKeysFunction } from './features/api-keys/api/list-api-keys.js'
export type { RevokeApiKeyFunction } from './features/api-keys/api/revoke-api-key.js'
export type { RotateApiKeyFunction, RotateApiKeyOptions } from './features/api-keys/api/rotate-api-key.js'
export type { NewApiKey } from './features/api-keys/manage.js'
export type { AuthorizationServerApi } from './features/authorization-server/feature.js'
export type { McpApi } from './features/mcp/feature.js'
export type { McpAuthFunction, McpAuthOptions } from './features/mcp/api/mcp-auth.js'
export type { McpRequestFunction } from './features/mcp/api/mcp-request.js'
export type * from './features/mcp/types.js'
export type { AuthorizationServerCallContext } from './features/authorization-server/api/context.js'
export type { ListAuthorizedAppsFunction } from './features/authorization-server/api/list-authorized-apps.js'
export type { RegisterOAuthClientFunction } from './features/authorization-server/api/register-oauth-client.js'
export type { RemoveOAuthClientFunction } from './features/authorization-server/api/remove-oauth-client.js'
export type { RevokeAuthorizedAppFunction } from './features/authorization-server/api/revoke-authorized-app.js'
export type { NodeRequest } from './http/request.js'
export type { AccessTokenOptions } from './features/oauth/access-token.js'

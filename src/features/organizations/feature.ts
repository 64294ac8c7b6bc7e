/**
 * Organizations (`organizations` option): users belong to several, with roles in each (permission
 * sets of the roles wing's engine, access.ts); the session's active organization (session-field.ts)
 * answers `hasPermission` (`permissionSource`) with no query beyond the session read; invitations by
 * e-mail; teams. The engine (manage.ts) loads on the first call that changes something.
 */
import type { CredentialOwnerType, Feature, PermissionSource } from '../../composition/index.js'
import type { Adapter } from '../../types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { createGetActiveOrganization, createSetActiveOrganization, type GetActiveOrganizationFunction, type SetActiveOrganizationFunction } from './api/active-organization.js'
import { createAcceptInvitation, type AcceptInvitationFunction } from './api/accept-invitation.js'
import { createAddMember, type AddMemberFunction } from './api/add-member.js'
import { createCancelInvitation, type CancelInvitationFunction } from './api/cancel-invitation.js'
import { createCreateOrganization, type CreateOrganizationFunction } from './api/create-organization.js'
import { createDeclineInvitation, type DeclineInvitationFunction } from './api/decline-invitation.js'
import { createInviteMember, type InviteMemberFunction } from './api/invite-member.js'
import { createListInvitations, type ListInvitationsFunction } from './api/list-invitations.js'
import { createListMyInvitations, type ListMyInvitationsFunction } from './api/list-my-invitations.js'
import { createGetOrganization, createListOrganizations, type GetOrganizationFunction, type ListOrganizationsFunction } from './api/list-organizations.js'
import { createLeaveOrganization, createListMembers, createRemoveMember, createUpdateMemberRoles, type LeaveOrganizationFunction, type ListMembersFunction, type RemoveMemberFunction, type UpdateMemberRolesFunction } from './api/members.js'
import { createTeamFunctions, type TeamFunctions } from './api/teams.js'
import { createResendInvitation, type ResendInvitationFunction } from './api/resend-invitation.js'
import { createDeleteOrganization, createUpdateOrganization, type DeleteOrganizationFunction, type UpdateOrganizationFunction } from './api/update-organization.js'
import { ORGANIZATION_ADAPTER_METHODS, organizationsOf, resolveOrganizations, TEAM_ADAPTER_METHODS, type ResolvedOrganizations } from './config.js'
import { activeOrganizationField } from './session-field.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them (the team functions with `organizations.teams`). */
export interface OrganizationsApi extends TeamFunctions {
  createOrganization: CreateOrganizationFunction
  listOrganizations: ListOrganizationsFunction
  getOrganization: GetOrganizationFunction
  updateOrganization: UpdateOrganizationFunction
  deleteOrganization: DeleteOrganizationFunction
  setActiveOrganization: SetActiveOrganizationFunction
  getActiveOrganization: GetActiveOrganizationFunction
  listMembers: ListMembersFunction
  updateMemberRoles: UpdateMemberRolesFunction
  removeMember: RemoveMemberFunction
  leaveOrganization: LeaveOrganizationFunction
  addMember: AddMemberFunction
  /** Invites an address to an organization by mail (`invitation: ['create']`; CSRF-checked). */
  inviteMember: InviteMemberFunction
  /** An organization's pending invitations (`invitation: ['list']`). */
  listInvitations: ListInvitationsFunction
  /** Cancels a pending invitation (`invitation: ['cancel']`; CSRF-checked). */
  cancelInvitation: CancelInvitationFunction
  /** Mails a pending invitation again with a new link (`invitation: ['create']`, 3 an hour; CSRF-checked). */
  resendInvitation: ResendInvitationFunction
  /** The pending invitations to the signed-in user's verified address. */
  listMyInvitations: ListMyInvitationsFunction
  /** Accepts an invitation by its mailed token: a member, the session's active organization (CSRF-checked). */
  acceptInvitation: AcceptInvitationFunction
  /** Declines an invitation by its mailed token (CSRF-checked). */
  declineInvitation: DeclineInvitationFunction
}

// The user's roles in the active organization, as the session carries them.
const activeRoles: PermissionSource = {
  access: (config) => (organizationsOf(config) as ResolvedOrganizations).access,
  rolesOf: (session) => (session.user?.activeOrganization as { roles?: readonly string[] } | null | undefined)?.roles,
}

// The organization as an owner of API keys: managed by its members whose roles there grant `apiKey: ['manage']`.
const organizationOwner: CredentialOwnerType = {
  type: 'organization',
  mayManage: async (config, userId, organizationId) => {
    const member = await (config.adapter as Required<Pick<Adapter, 'getMember'>>).getMember(organizationId, userId)
    return member !== null && (organizationsOf(config) as ResolvedOrganizations).access.can(member.roles, { apiKey: ['manage'] })
  },
}

export const organizationsFeature: Feature = {
  name: 'organizations',
  requires: ['roles'],
  resolve: (config) => resolveOrganizations(config.organizations),
  check(config) {
    const adapter = config.adapter as Record<string, unknown> | undefined
    const needed = [...ORGANIZATION_ADAPTER_METHODS, ...(organizationsOf(config)?.teams ? TEAM_ADAPTER_METHODS : []), 'getUser', 'getUserByEmail']
    const missing = needed.filter((method) => typeof adapter?.[method] !== 'function')
    if (missing.length > 0) throw new InvalidConfigurationError(`The organizations option needs an adapter with ${missing.join(', ')} (KnexAdapter has them, after the organizations migration). See docs/organizations.md.`)
    if (config.session.strategy === 'jwt' && !config.session.store) {
      config.logger.warn(
        'OrganizationsWithoutStore',
        'organizations with JWT sessions and no session.store: a member removed or given lesser roles keeps the roles of their session token in its active organization until it expires (jwt.maxAge). Configure session.store to end such sessions at once, or use database sessions. See docs/organizations.md.',
      )
    }
    const options = organizationsOf(config) as ResolvedOrganizations
    const providerServer = config.providers.some((provider) => provider.type === 'email' && (provider as { server?: unknown }).server !== undefined)
    if (!options.sendMail && options.server === undefined && !providerServer) {
      // Said at init rather than at the first invitation, whose mail would only be logged as not sent.
      config.logger.warn('OrganizationMailNotConfigured', 'organizations: invitations cannot be mailed: set organizations.server and organizations.from, organizations.sendMail, or configure a Nodemailer provider. See docs/organizations.md.')
    }
  },
  routes: [
    { method: 'GET', path: '/organizations', page: true, load: async () => (await import('./routes/organizations-page.js')).organizationsPageAction },
    { method: 'POST', path: '/organizations', csrf: true, load: async () => (await import('./routes/organizations-create.js')).createOrganizationAction },
    { method: 'POST', path: '/organizations/update', csrf: true, load: async () => (await import('./routes/organizations-update.js')).updateOrganizationAction },
    { method: 'POST', path: '/organizations/delete', csrf: true, load: async () => (await import('./routes/organizations-delete.js')).deleteOrganizationAction },
    { method: 'POST', path: '/organizations/active', csrf: true, load: async () => (await import('./routes/organizations-active.js')).switchOrganizationAction },
    { method: 'POST', path: '/organizations/leave', csrf: true, load: async () => (await import('./routes/organizations-leave.js')).leaveOrganizationAction },
    { method: 'GET', path: '/organizations/members', page: true, load: async () => (await import('./routes/members-page.js')).membersPageAction },
    { method: 'POST', path: '/organizations/members/role', csrf: true, load: async () => (await import('./routes/members-role.js')).updateMemberRolesAction },
    { method: 'POST', path: '/organizations/members/remove', csrf: true, load: async () => (await import('./routes/members-remove.js')).removeMemberAction },
    // Invitations: the accept page (which accepts nothing by itself), its two forms, the organization's list and changes, the user's own.
    { method: 'GET', path: '/organizations/invitation', page: true, load: async () => (await import('./routes/invitation-page.js')).invitationPage },
    { method: 'POST', path: '/organizations/invitation/accept', csrf: true, load: async () => (await import('./routes/invitation-accept.js')).acceptInvitationAction },
    { method: 'POST', path: '/organizations/invitation/decline', csrf: true, load: async () => (await import('./routes/invitation-decline.js')).declineInvitationAction },
    { method: 'GET', path: '/organizations/invitations', page: true, load: async () => (await import('./routes/invitation-list.js')).listInvitationsAction },
    { method: 'POST', path: '/organizations/invitations', csrf: true, load: async () => (await import('./routes/invitation-create.js')).createInvitationAction },
    { method: 'POST', path: '/organizations/invitations/cancel', csrf: true, load: async () => (await import('./routes/invitation-cancel.js')).cancelInvitationAction },
    { method: 'POST', path: '/organizations/invitations/resend', csrf: true, load: async () => (await import('./routes/invitation-resend.js')).resendInvitationAction },
    { method: 'GET', path: '/invitations', page: true, load: async () => (await import('./routes/invitation-mine.js')).myInvitationsPage },
  ],
  off: 'Organizations are off: set the organizations option (and run the organizations migration) to use their routes.',
  api: (api): OrganizationsApi => ({
    createOrganization: createCreateOrganization(api),
    listOrganizations: createListOrganizations(api),
    getOrganization: createGetOrganization(api),
    updateOrganization: createUpdateOrganization(api),
    deleteOrganization: createDeleteOrganization(api),
    setActiveOrganization: createSetActiveOrganization(api),
    getActiveOrganization: createGetActiveOrganization(api),
    listMembers: createListMembers(api),
    updateMemberRoles: createUpdateMemberRoles(api),
    removeMember: createRemoveMember(api),
    leaveOrganization: createLeaveOrganization(api),
    addMember: createAddMember(api),
    inviteMember: createInviteMember(api),
    listInvitations: createListInvitations(api),
    cancelInvitation: createCancelInvitation(api),
    resendInvitation: createResendInvitation(api),
    listMyInvitations: createListMyInvitations(api),
    acceptInvitation: createAcceptInvitation(api),
    declineInvitation: createDeclineInvitation(api),
    ...createTeamFunctions(api),
  }),
  hooks: {
    sessionUserField: activeOrganizationField,
    permissionSource: activeRoles,
    credentialOwner: organizationOwner,
    // The background prune (`prune` option): invitations past their expiry, used or not.
    prune: async (config) => ({ invitations: await (config.adapter as Required<Pick<Adapter, 'pruneInvitations'>>).pruneInvitations(new Date()) }),
  },
  adapterMethods: [...ORGANIZATION_ADAPTER_METHODS, ...TEAM_ADAPTER_METHODS],
  events: [
    'organizationCreated',
    'organizationUpdated',
    'organizationDeleted',
    'memberAdded',
    'memberRemoved',
    'memberRoleChanged',
    'activeOrganizationChanged',
    'invitationCreated',
    'invitationAccepted',
    'invitationDeclined',
    'invitationCanceled',
    'teamCreated',
    'teamDeleted',
    'teamMemberAdded',
    'teamMemberRemoved',
  ],
  errors: ['Organization'],
  rateLimitBuckets: ['organization-invitation'],
}

/** The organizations' records as the functions and JSON routes give them: dates as ISO strings, no internal fields. */
import type { AdapterInvitation, AdapterMember, AdapterMemberWithUser, AdapterOrganization, Invitation, Organization, OrganizationMember, OrganizationMembership } from './types.js'

export function organizationShape(organization: AdapterOrganization): Organization {
  const { id, name, slug, logo, metadata, createdAt } = organization
  return { id, name, slug, logo, metadata, createdAt: createdAt.toISOString() }
}

export function membershipShape(organization: AdapterOrganization, member: AdapterMember): OrganizationMembership {
  return { ...organizationShape(organization), roles: [...member.roles] }
}

export function memberShape(member: AdapterMemberWithUser): OrganizationMember {
  const { name, email, image } = member.user
  return { id: member.id, userId: member.userId, roles: [...member.roles], createdAt: member.createdAt.toISOString(), user: { name, email, image } }
}

/** An invitation without its token's hash. */
export function invitationShape(invitation: AdapterInvitation): Invitation {
  const { id, organizationId, email, roles, teamId, status, inviterId, createdAt, expiresAt, sentAt } = invitation
  return { id, organizationId, email, roles: [...roles], teamId, status, inviterId, createdAt: createdAt.toISOString(), expiresAt: expiresAt.toISOString(), sentAt: sentAt.toISOString() }
}

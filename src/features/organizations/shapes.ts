/** The organizations' records as the functions and JSON routes give them: dates as ISO strings, no internal fields. */
import type { AdapterMember, AdapterMemberWithUser, AdapterOrganization, Organization, OrganizationMember, OrganizationMembership } from './types.js'

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

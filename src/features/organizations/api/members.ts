/** The server-side `listMembers`, `updateMemberRoles`, `removeMember` and `leaveOrganization`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { OrganizationMember } from '../types.js'
import { organizationCall, sendCookies, type OrganizationsCallContext } from './context.js'

/**
 * The organization's members with their roles; the caller's roles must grant `member: ['list']`.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`
 */
export type ListMembersFunction = (req: OrganizationsCallContext, options: { organizationId: string }) => Promise<OrganizationMember[]>

/**
 * Sets a member's roles (`member: ['update-role']`). Nobody but an owner changes their own roles;
 * only owners give, take or change the owner role; the last owner stays one. The member's sessions
 * see the change as after `setRoles` (docs/organizations.md). CSRF-checked.
 * @throws OrganizationError `not_found`, `forbidden`, `invalid_input`, `last_owner`; MissingCSRFError
 * @example
 * ```ts
 * await updateMemberRoles(req, { organizationId, userId, roles: ['admin'], csrfToken: req.body.csrfToken })
 * ```
 */
export type UpdateMemberRolesFunction = (req: OrganizationsCallContext, options: { organizationId: string; userId: string; roles: readonly string[] } & CsrfOptions) => Promise<OrganizationMember>

/**
 * Removes a member (`member: ['remove']`; only owners remove owners; the last owner cannot go). Their
 * sessions lose the organization as after `setRoles`. CSRF-checked.
 * @throws OrganizationError `not_found`, `forbidden`, `last_owner`; MissingCSRFError
 */
export type RemoveMemberFunction = (req: OrganizationsCallContext, options: { organizationId: string; userId: string } & CsrfOptions) => Promise<void>

/**
 * The signed-in user leaves the organization (the last owner cannot); their session stops naming it as
 * active (a JWT session's new cookie goes on `res`). CSRF-checked.
 * @throws OrganizationError `not_found`, `last_owner`
 */
export type LeaveOrganizationFunction = (req: OrganizationsCallContext, options: { organizationId: string } & CsrfOptions) => Promise<void>

export function createListMembers(api: Api): ListMembersFunction {
  return async (given, options) => {
    const { caller, manage } = await organizationCall(api, given, 'listMembers()')
    return manage.listMembers(caller, options?.organizationId)
  }
}

export function createUpdateMemberRoles(api: Api): UpdateMemberRolesFunction {
  return async (given, options) => {
    const { caller, manage } = await organizationCall(api, given, 'updateMemberRoles()', options ?? {})
    return manage.updateMemberRoles(caller, options.organizationId, options.userId, options.roles)
  }
}

export function createRemoveMember(api: Api): RemoveMemberFunction {
  return async (given, options) => {
    const { caller, manage, req, res } = await organizationCall(api, given, 'removeMember()', options ?? {})
    sendCookies(api, req, res, await manage.removeMember(caller, options.organizationId, options.userId))
  }
}

export function createLeaveOrganization(api: Api): LeaveOrganizationFunction {
  return async (given, options) => {
    const { caller, manage, req, res } = await organizationCall(api, given, 'leaveOrganization()', options ?? {})
    sendCookies(api, req, res, await manage.removeMember(caller, options.organizationId, caller.userId))
  }
}

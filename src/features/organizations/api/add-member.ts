/** The server-side `addMember(organizationId, userId, roles)`: for the app's own code, never a route. */
import type { Api } from '../../../api/context.js'
import { emitEvent } from '../../../events.js'
import { optionsOf, organizationAdapter } from '../call.js'
import { OrganizationError } from '../errors.js'
import type { AdapterMember } from '../types.js'

/**
 * Makes a user a member of an organization with `roles`, without an invitation: for seeding, an
 * import, or your own admin code after your own check. No request is involved, so nothing a user
 * sends reaches it.
 * @throws OrganizationError `not_found` (no such organization or user), `invalid_input` (a role not defined), `limit_reached`; null when they are a member already
 * @example
 * ```ts
 * await addMember(acme.id, user.id, ['member'])
 * ```
 */
export type AddMemberFunction = (organizationId: string, userId: string, roles?: readonly string[]) => Promise<AdapterMember | null>

export function createAddMember(api: Api): AddMemberFunction {
  return async (organizationId, userId, roles) => {
    const options = optionsOf(api.config, 'addMember()')
    const { checkedRoles } = await import('../manage.js')
    const wanted = checkedRoles({ options }, roles ?? [options.defaultInvitationRole])
    const adapter = organizationAdapter(api.config)
    if (!(await adapter.getOrganization({ id: organizationId })) || !(await adapter.getUser(userId))) throw new OrganizationError('not_found', 'addMember(): no such organization or user.')
    if ((await adapter.countMembers(organizationId)) >= options.membersPerOrganization) throw new OrganizationError('limit_reached', 'addMember(): the organization has membersPerOrganization members.')
    if ((await adapter.listOrganizationsOfUser(userId)).length >= options.organizationsPerUser) throw new OrganizationError('limit_reached', 'addMember(): the user belongs to organizationsPerUser organizations.')
    const member = await adapter.addMember({ organizationId, userId, roles: wanted })
    if (member) await emitEvent(api.config, 'memberAdded', { organizationId, userId, roles: member.roles, by: null })
    return member
  }
}

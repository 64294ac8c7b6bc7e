/** The server-side `listMyInvitations(req)`. */
import type { Api } from '../../../api/context.js'
import type { InvitationForMe } from '../types.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * The pending, unexpired invitations to the signed-in user's address, with each organization's name;
 * none while the address is not verified (typing an address proves no mailbox).
 * @throws OrganizationError `not_signed_in`
 * @example
 * ```ts
 * const invitations = await listMyInvitations(req)
 * ```
 */
export type ListMyInvitationsFunction = (req: OrganizationsCallContext) => Promise<InvitationForMe[]>

export function createListMyInvitations(api: Api): ListMyInvitationsFunction {
  return async (given) => {
    const { caller } = await organizationCall(api, given, 'listMyInvitations()')
    return (await loadInvitations()).listForMe(caller)
  }
}

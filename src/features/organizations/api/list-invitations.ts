/** The server-side `listInvitations(req, { organizationId })`. */
import type { Api } from '../../../api/context.js'
import type { Invitation } from '../types.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * The organization's pending invitations (expired ones too, which a resend renews), oldest first;
 * the caller's roles there must grant `invitation: ['list']`. Never a token.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`
 * @example
 * ```ts
 * const pending = await listInvitations(req, { organizationId })
 * ```
 */
export type ListInvitationsFunction = (req: OrganizationsCallContext, options: { organizationId: string }) => Promise<Invitation[]>

export function createListInvitations(api: Api): ListInvitationsFunction {
  return async (given, options) => {
    const { caller } = await organizationCall(api, given, 'listInvitations()')
    return (await loadInvitations()).list(caller, options?.organizationId)
  }
}

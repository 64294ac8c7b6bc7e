/** The server-side `inviteMember(req, { organizationId, email, roles })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { NewInvitation, SentInvitation } from '../invitations.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/** What `inviteMember` takes: the organization, the address, the roles, and the CSRF token of the form that asked. */
export interface InviteMemberOptions extends NewInvitation, CsrfOptions {}

/**
 * Invites an address to an organization by mail; the caller's roles there must grant
 * `invitation: ['create']`, and only an owner invites with the owner role. A second invitation to
 * the same address refreshes the pending one (a new link; the old one stops working). The mail goes
 * through `organizations.sendMail`, `organizations.server`, or a configured e-mail provider's server;
 * `mailed` says whether it left. CSRF-checked.
 *
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`, `invalid_input`, `already_member` (the address is a member's), `limit_reached` (`membersPerOrganization`), `rate_limited`; MissingCSRFError
 * @example
 * ```ts
 * const invitation = await inviteMember(req, { organizationId, email: 'grace@example.com', roles: ['admin'], csrfToken: req.body.csrfToken })
 * ```
 */
export type InviteMemberFunction = (req: OrganizationsCallContext, options: InviteMemberOptions) => Promise<SentInvitation>

export function createInviteMember(api: Api): InviteMemberFunction {
  return async (given, options) => {
    const { caller } = await organizationCall(api, given, 'inviteMember()', options ?? {})
    return (await loadInvitations()).invite(caller, options)
  }
}

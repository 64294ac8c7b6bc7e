/** The server-side `resendInvitation(req, { invitationId })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { SentInvitation } from '../invitations.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * Mails a pending invitation again, with a new link and expiry (the old link stops working). The
 * caller's roles in its organization must grant `invitation: ['create']`. At most 3 mails of one
 * invitation an hour (bucket `organization-invitation`). CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`, `rate_limited` (its `retryAfterSeconds`); MissingCSRFError
 * @example
 * ```ts
 * await resendInvitation(req, { invitationId, csrfToken: req.body.csrfToken })
 * ```
 */
export type ResendInvitationFunction = (req: OrganizationsCallContext, options: { invitationId: string } & CsrfOptions) => Promise<SentInvitation>

export function createResendInvitation(api: Api): ResendInvitationFunction {
  return async (given, options) => {
    const { caller } = await organizationCall(api, given, 'resendInvitation()', options ?? {})
    return (await loadInvitations()).resend(caller, options.invitationId)
  }
}

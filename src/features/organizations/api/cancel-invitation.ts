/** The server-side `cancelInvitation(req, { invitationId })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * Cancels a pending invitation: its link stops working. The caller's roles in its organization must
 * grant `invitation: ['cancel']`; another organization's invitation is `not_found`. CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 * @example
 * ```ts
 * await cancelInvitation(req, { invitationId: req.body.invitationId, csrfToken: req.body.csrfToken })
 * ```
 */
export type CancelInvitationFunction = (req: OrganizationsCallContext, options: { invitationId: string } & CsrfOptions) => Promise<void>

export function createCancelInvitation(api: Api): CancelInvitationFunction {
  return async (given, options) => {
    const { caller } = await organizationCall(api, given, 'cancelInvitation()', options ?? {})
    await (await loadInvitations()).cancel(caller, options.invitationId)
  }
}

/** The server-side `declineInvitation(req, { token })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { loadInvitations, organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * Declines the invitation of the mailed `token` for the signed-in user, whose address must be the one
 * invited. The token works once. CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `invalid_invitation`; MissingCSRFError
 * @example
 * ```ts
 * await declineInvitation(req, { token: req.body.token, csrfToken: req.body.csrfToken })
 * ```
 */
export type DeclineInvitationFunction = (req: OrganizationsCallContext, options: { token: string } & CsrfOptions) => Promise<void>

export function createDeclineInvitation(api: Api): DeclineInvitationFunction {
  return async (given, options) => {
    const { caller } = await organizationCall(api, given, 'declineInvitation()', options ?? {})
    await (await loadInvitations()).decline(caller, options.token)
  }
}

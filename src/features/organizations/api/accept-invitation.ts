/** The server-side `acceptInvitation(req, { token })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { OrganizationMembership } from '../types.js'
import { assertResponse, loadInvitations, organizationCall, sendCookies, type OrganizationsCallContext } from './context.js'

/**
 * Accepts the invitation of the mailed `token` for the signed-in user, whose address must be the one
 * invited: they become a member with its roles, and the organization their session's active one (a
 * JWT session's cookie is set on `res`). The token works once. CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `invalid_invitation` (used, declined, canceled, expired, another address: one message), `limit_reached` (`organizationsPerUser`); MissingCSRFError; TypeError (JWT sessions without a response)
 * @example
 * ```ts
 * const organization = await acceptInvitation({ req, res }, { token: req.body.token, csrfToken: req.body.csrfToken })
 * ```
 */
export type AcceptInvitationFunction = (req: OrganizationsCallContext, options: { token: string } & CsrfOptions) => Promise<OrganizationMembership>

export function createAcceptInvitation(api: Api): AcceptInvitationFunction {
  return async (given, options) => {
    const what = 'acceptInvitation()'
    const { caller, req, res } = await organizationCall(api, given, what, options ?? {})
    assertResponse(api, res, what)
    const { organization, cookies } = await (await loadInvitations()).accept(caller, options.token)
    sendCookies(api, req, res, cookies)
    return organization
  }
}

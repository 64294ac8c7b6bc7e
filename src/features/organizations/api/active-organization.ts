/** The server-side `setActiveOrganization(req, { organizationId })` and `getActiveOrganization(req)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { givenRequest } from '../../../api/context.js'
import { optionsOf, organizationAdapter } from '../call.js'
import { activeOrganizationOf } from '../session-field.js'
import { organizationShape } from '../shapes.js'
import type { Organization } from '../types.js'
import { assertResponse, organizationCall, sendCookies, type OrganizationsCallContext } from './context.js'

/** The active organization in full, with the user's roles there. */
export interface ActiveOrganizationDetails extends Organization {
  roles: string[]
}

/**
 * Makes an organization the signed-in user is a member of the session's active one (`null`: none):
 * `hasPermission` then answers for their roles there. JWT sessions get a new cookie (pass `{ req, res }`,
 * or call it in an Express route, whose `req.res` is used). CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found` (not a member); MissingCSRFError
 * @example
 * ```ts
 * await setActiveOrganization(req, { organizationId: req.body.organizationId, csrfToken: req.body.csrfToken })
 * ```
 */
export type SetActiveOrganizationFunction = (req: OrganizationsCallContext, options: { organizationId: string | null } & CsrfOptions) => Promise<ActiveOrganizationDetails | null>

/**
 * The session's active organization, read from the database, with the user's roles there now; null
 * when there is none, or the user is no longer a member (two queries beyond the session read).
 */
export type GetActiveOrganizationFunction = (req: OrganizationsCallContext) => Promise<ActiveOrganizationDetails | null>

export function createSetActiveOrganization(api: Api): SetActiveOrganizationFunction {
  return async (given, options) => {
    const what = 'setActiveOrganization()'
    const { caller, req, res } = await organizationCall(api, given, what, options ?? {})
    assertResponse(api, res, what)
    const { switchOrganization } = await import('../active.js')
    const { organization, cookies } = await switchOrganization(caller, options.organizationId)
    sendCookies(api, req, res, cookies)
    return organization
  }
}

export function createGetActiveOrganization(api: Api): GetActiveOrganizationFunction {
  return async (given) => {
    optionsOf(api.config, 'getActiveOrganization()')
    const { req, res } = givenRequest(given, 'getActiveOrganization()')
    const session = await api.session(req, res)
    const active = activeOrganizationOf(session?.user?.activeOrganization)
    if (!session || !active) return null
    const adapter = organizationAdapter(api.config)
    const member = await adapter.getMember(active.id, session.user.id)
    const organization = member && (await adapter.getOrganization({ id: active.id }))
    return organization ? { ...organizationShape(organization), roles: [...member.roles] } : null
  }
}

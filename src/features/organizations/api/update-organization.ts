/** The server-side `updateOrganization(req, { organizationId, name, slug, logo, metadata })` and `deleteOrganization(req, { organizationId })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { OrganizationChanges } from '../manage.js'
import type { Organization } from '../types.js'
import { organizationCall, sendCookies, type OrganizationsCallContext } from './context.js'

/** What `updateOrganization` takes. */
export interface UpdateOrganizationOptions extends OrganizationChanges, CsrfOptions {
  organizationId: string
}

/**
 * Changes an organization's name, slug, logo or metadata; the caller's roles there must grant
 * `organization: ['update']` (owners and admins). CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`, `invalid_input`, `slug_taken`; MissingCSRFError
 */
export type UpdateOrganizationFunction = (req: OrganizationsCallContext, options: UpdateOrganizationOptions) => Promise<Organization>

/**
 * Deletes an organization with its members, invitations and teams; the caller's roles must grant
 * `organization: ['delete']` (owners). The members' sessions lose it (as after a removal); the
 * caller's own session, when it was active there, is switched to none (its new cookie goes on `res`). CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 */
export type DeleteOrganizationFunction = (req: OrganizationsCallContext, options: { organizationId: string } & CsrfOptions) => Promise<void>

export function createUpdateOrganization(api: Api): UpdateOrganizationFunction {
  return async (given, options) => {
    const { caller, manage } = await organizationCall(api, given, 'updateOrganization()', options ?? {})
    const { organizationId, csrfToken: _token, skipCsrfCheck: _skip, ...changes } = options
    return manage.updateOrganization(caller, organizationId, changes)
  }
}

export function createDeleteOrganization(api: Api): DeleteOrganizationFunction {
  return async (given, options) => {
    const { caller, manage, req, res } = await organizationCall(api, given, 'deleteOrganization()', options ?? {})
    sendCookies(api, req, res, await manage.deleteOrganization(caller, options.organizationId))
  }
}

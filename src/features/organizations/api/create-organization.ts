/** The server-side `createOrganization(req, { name, slug, logo, metadata })`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { NewOrganization } from '../manage.js'
import type { OrganizationMembership } from '../types.js'
import { organizationCall, type OrganizationsCallContext } from './context.js'

/** What `createOrganization` takes: the organization, and the CSRF token of the form that asked. */
export interface CreateOrganizationOptions extends NewOrganization, CsrfOptions {}

/**
 * Creates an organization; the signed-in user becomes its owner. It does not become the session's
 * active organization: call `setActiveOrganization` for that. CSRF-checked (pass the form's
 * `csrfToken`, or `skipCsrfCheck` for a call no browser's form asked for).
 *
 * @throws OrganizationError `not_signed_in`, `forbidden` (`allowCreate`), `invalid_input`, `slug_taken`, `limit_reached`; MissingCSRFError
 * @example
 * ```ts
 * const acme = await createOrganization(req, { name: 'Acme Inc.', csrfToken: req.body.csrfToken })
 * ```
 */
export type CreateOrganizationFunction = (req: OrganizationsCallContext, options: CreateOrganizationOptions) => Promise<OrganizationMembership>

export function createCreateOrganization(api: Api): CreateOrganizationFunction {
  return async (given, options) => {
    const { caller, manage } = await organizationCall(api, given, 'createOrganization()', options ?? {})
    return manage.createOrganization(caller, options)
  }
}

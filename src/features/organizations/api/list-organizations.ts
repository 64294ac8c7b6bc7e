/** The server-side `listOrganizations(req)` and `getOrganization(req, { organizationId | slug })`. */
import type { Api } from '../../../api/context.js'
import type { OrganizationMembership } from '../types.js'
import { organizationCall, type OrganizationsCallContext } from './context.js'

/**
 * The signed-in user's organizations, with their roles in each, oldest membership first.
 * @throws OrganizationError `not_signed_in`
 * @example
 * ```ts
 * const mine = await listOrganizations(req)
 * ```
 */
export type ListOrganizationsFunction = (req: OrganizationsCallContext) => Promise<OrganizationMembership[]>

/**
 * One of the signed-in user's organizations, by id or slug; `not_found` for one they are not in.
 * @throws OrganizationError `not_signed_in`, `not_found`
 */
export type GetOrganizationFunction = (req: OrganizationsCallContext, which: { organizationId: string } | { slug: string }) => Promise<OrganizationMembership>

export function createListOrganizations(api: Api): ListOrganizationsFunction {
  return async (given) => {
    const { caller, manage } = await organizationCall(api, given, 'listOrganizations()')
    return manage.listOrganizations(caller)
  }
}

export function createGetOrganization(api: Api): GetOrganizationFunction {
  return async (given, which) => {
    const { caller, manage } = await organizationCall(api, given, 'getOrganization()')
    return manage.getOrganization(caller, (which ?? {}) as { organizationId?: unknown; slug?: unknown })
  }
}

/**
 * POST /organizations/update `{ csrfToken, organizationId, name?, slug?, logo? }` (JSON may add
 * `metadata`; a form's empty logo clears it): changes one of the user's organizations, their roles
 * there granting `organization: ['update']`. JSON `{ organization }`; browsers back to its members page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import type { OrganizationChanges } from '../manage.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, membersPath, optionalField, posted, refusal } from './organization-shared.js'

export const updateOrganizationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const organizationId = posted(ctx, 'organizationId')
  const changes = { name: optionalField(ctx, 'name'), slug: optionalField(ctx, 'slug'), logo: optionalField(ctx, 'logo', null), metadata: jsonClient(ctx) ? posted(ctx, 'metadata') : undefined } as OrganizationChanges
  try {
    const organization = await (await loadManage()).updateOrganization(asking.caller, organizationId, changes)
    return jsonClient(ctx) ? jsonAnswer({ organization }) : backTo(ctx, membersPath(organization.id))
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

/**
 * POST /organizations/delete `{ csrfToken, organizationId }`: deletes one of the user's organizations
 * with its members, invitations and teams, their roles there granting `organization: ['delete']`
 * (owners). JSON `{ deleted: organizationId }`; browsers back to the organizations page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal } from './organization-shared.js'

export const deleteOrganizationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const organizationId = posted(ctx, 'organizationId')
  try {
    const cookies = await (await loadManage()).deleteOrganization(asking.caller, organizationId)
    return jsonClient(ctx) ? jsonAnswer({ deleted: organizationId }, { cookies }) : backTo(ctx, '/organizations', cookies)
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

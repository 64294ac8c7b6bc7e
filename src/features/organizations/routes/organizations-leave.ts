/**
 * POST /organizations/leave `{ csrfToken, organizationId }`: the signed-in user leaves one of their
 * organizations (no permission needed; the last owner cannot: 409 `last_owner`). JSON
 * `{ left: organizationId }`; browsers back to the organizations page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal } from './organization-shared.js'

export const leaveOrganizationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const organizationId = posted(ctx, 'organizationId')
  try {
    const cookies = await (await loadManage()).removeMember(asking.caller, organizationId, asking.caller.userId)
    return jsonClient(ctx) ? jsonAnswer({ left: organizationId }, { cookies }) : backTo(ctx, '/organizations', cookies)
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

/**
 * POST /organizations/members/remove `{ csrfToken, organizationId, userId }`: removes a member, the
 * caller's roles granting `member: ['remove']` (their own id: they leave, as POST /organizations/leave);
 * only an owner removes an owner; the last owner cannot go (409 `last_owner`). JSON
 * `{ removed: userId }`; browsers back to the members page (the organizations page after leaving).
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, membersPath, posted, refusal } from './organization-shared.js'

export const removeMemberAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const organizationId = posted(ctx, 'organizationId')
  const userId = posted(ctx, 'userId')
  try {
    const cookies = await (await loadManage()).removeMember(asking.caller, organizationId, userId)
    const left = userId === asking.caller.userId
    if (jsonClient(ctx)) return jsonAnswer({ removed: userId }, { cookies })
    return backTo(ctx, left ? '/organizations' : membersPath(organizationId as string), cookies)
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

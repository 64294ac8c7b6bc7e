/**
 * POST /organizations/members/role `{ csrfToken, organizationId, userId, roles }` (`roles`: a form's
 * one role, or a JSON array): sets a member's roles, the caller's roles granting
 * `member: ['update-role']`; nobody but an owner changes their own roles or gives, takes or changes
 * the owner role; the last owner stays one (409 `last_owner`). JSON `{ member }`; browsers back to the members page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, membersPath, posted, refusal } from './organization-shared.js'

export const updateMemberRolesAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const organizationId = posted(ctx, 'organizationId')
  try {
    const member = await (await loadManage()).updateMemberRoles(asking.caller, organizationId, posted(ctx, 'userId'), posted(ctx, 'roles'))
    return jsonClient(ctx) ? jsonAnswer({ member }) : backTo(ctx, membersPath(organizationId as string))
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

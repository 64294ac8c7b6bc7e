/**
 * GET /organizations/members?organizationId=…: the organization's members with their roles, the
 * caller's roles there granting `member: ['list']`: JSON `{ members }`, or the members page
 * (browsers) with the forms the viewer's roles allow. Another's organization is 404 `not_found`,
 * the same answer as a made-up id.
 */
import type { Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { callerOrSignIn, jsonAnswer, jsonClient, membersPage, membersPath, refusal } from './organization-shared.js'

export const membersPageAction: Action = async (ctx) => {
  const organizationId = ctx.query.get('organizationId') ?? undefined
  const asking = await callerOrSignIn(ctx, organizationId === undefined ? '/organizations' : membersPath(organizationId))
  if ('response' in asking) return asking.response
  try {
    if (!jsonClient(ctx)) return await membersPage(ctx, asking.caller, organizationId)
    return jsonAnswer({ members: await (await loadManage()).listMembers(asking.caller, organizationId) })
  } catch (error) {
    // Not the members page again: it is the one that failed.
    return refusal(ctx, asking.caller, error)
  }
}

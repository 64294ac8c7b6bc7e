/**
 * POST /organizations/active `{ csrfToken, organizationId }` (empty, null or absent: none): makes one
 * of the user's organizations the session's active one (`switchOrganization`), whose roles then
 * answer `hasPermission`. JWT sessions get the re-sealed cookie with the answer. JSON
 * `{ activeOrganization }` (the organization with the user's roles, or null); browsers back to the
 * organizations page. One the user is not a member of is `not_found` and the session is left as it was.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal } from './organization-shared.js'

export const switchOrganizationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const given = posted(ctx, 'organizationId')
  try {
    const { switchOrganization } = await import('../active.js')
    const { organization, cookies } = await switchOrganization(asking.caller, given === undefined || given === '' ? null : given)
    return jsonClient(ctx) ? jsonAnswer({ activeOrganization: organization }, { cookies }) : backTo(ctx, '/organizations', cookies)
  } catch (error) {
    return refusal(ctx, asking.caller, error)
  }
}

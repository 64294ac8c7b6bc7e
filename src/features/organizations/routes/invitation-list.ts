/** GET /organizations/invitations?organizationId=…: the organization's pending invitations as JSON `{ invitations }` (`invitation: ['list']`). */
import { authUrl, type Action } from '../../../actions/context.js'
import { callerOrSignIn, field, refusal } from './invitation-shared.js'

export const listInvitationsAction: Action = async (ctx) => {
  const organizationId = field(ctx, 'organizationId')
  const asking = await callerOrSignIn(ctx, `${authUrl(ctx, '/organizations/invitations')}?${new URLSearchParams({ organizationId: organizationId ?? '' })}`)
  if ('response' in asking) return asking.response
  try {
    return { json: { invitations: await asking.engine.list(asking.caller, organizationId) }, headers: { 'Cache-Control': 'no-store' } }
  } catch (error) {
    // A JSON route for every client: its refusal is JSON too.
    return refusal(ctx, error, { json: true })
  }
}

/** GET /invitations: the signed-in user's pending invitations, as JSON `{ invitations }` (JSON clients) or a themed page. */
import { authUrl, type Action } from '../../../actions/context.js'
import { renderMyInvitationsPage } from '../pages/invitation.js'
import { callerOrSignIn, jsonClient, pageBase } from './invitation-shared.js'

export const myInvitationsPage: Action = async (ctx) => {
  const asking = await callerOrSignIn(ctx, authUrl(ctx, '/invitations'))
  if ('response' in asking) return asking.response
  const invitations = await asking.engine.listForMe(asking.caller)
  const headers = { 'Cache-Control': 'no-store' }
  if (jsonClient(ctx)) return { json: { invitations }, headers }
  return { html: renderMyInvitationsPage({ invitations, ...pageBase(ctx) }), headers }
}

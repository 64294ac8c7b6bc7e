/** POST /organizations/invitations/cancel `{ csrfToken, invitationId, callbackUrl? }`: cancels a pending invitation (`invitation: ['cancel']`). JSON `{ canceled: id }`, or back. */
import { assertCsrf, authUrl, type Action } from '../../../actions/context.js'
import { backTo, callerOrSignIn, field, jsonClient, refusal } from './invitation-shared.js'

export const cancelInvitationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, authUrl(ctx, '/invitations'))
  if ('response' in asking) return asking.response
  const invitationId = field(ctx, 'invitationId')
  try {
    await asking.engine.cancel(asking.caller, invitationId)
  } catch (error) {
    return refusal(ctx, error)
  }
  return jsonClient(ctx) ? { json: { canceled: invitationId } } : { redirect: await backTo(ctx) }
}

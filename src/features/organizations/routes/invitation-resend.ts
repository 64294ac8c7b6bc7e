/**
 * POST /organizations/invitations/resend `{ csrfToken, invitationId, callbackUrl? }`: mails a pending
 * invitation again with a new link (`invitation: ['create']`; 3 an hour: 429 with `Retry-After`).
 * JSON `{ invitation }`, or back.
 */
import { assertCsrf, authUrl, type Action } from '../../../actions/context.js'
import { backTo, callerOrSignIn, field, jsonClient, refusal } from './invitation-shared.js'

export const resendInvitationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, authUrl(ctx, '/invitations'))
  if ('response' in asking) return asking.response
  try {
    const invitation = await asking.engine.resend(asking.caller, field(ctx, 'invitationId'))
    if (jsonClient(ctx)) return { json: { invitation }, headers: { 'Cache-Control': 'no-store' } }
    return { redirect: await backTo(ctx) }
  } catch (error) {
    return refusal(ctx, error)
  }
}

/** POST /organizations/invitation/decline `{ csrfToken, token }`: the signed-in user, with the invited address, declines. JSON `{ declined: true }`, or a notice. */
import { assertCsrf, authUrl, type Action } from '../../../actions/context.js'
import { renderInvitationNotice } from '../pages/invitation.js'
import { callerOrSignIn, field, jsonClient, pageBase, refusal } from './invitation-shared.js'

export const declineInvitationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const token = field(ctx, 'token') ?? ''
  const asking = await callerOrSignIn(ctx, `${authUrl(ctx, '/organizations/invitation')}?${new URLSearchParams({ token })}`)
  if ('response' in asking) return asking.response
  try {
    await asking.engine.decline(asking.caller, token)
  } catch (error) {
    return refusal(ctx, error)
  }
  if (jsonClient(ctx)) return { json: { declined: true } }
  return { html: renderInvitationNotice({ heading: 'Invitation declined', message: 'You declined the invitation. Its link no longer works.', role: 'status', ...pageBase(ctx) }) }
}

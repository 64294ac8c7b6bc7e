/**
 * POST /organizations/invitation/accept `{ csrfToken, token }`: the signed-in user, with the invited
 * address, becomes a member and the organization their session's active one. JSON clients get
 * `{ organization }`; browsers go to `callbackUrl` or the app's home, with the session's cookies.
 */
import { assertCsrf, authUrl, type Action } from '../../../actions/context.js'
import { backTo, callerOrSignIn, field, jsonClient, refusal } from './invitation-shared.js'

export const acceptInvitationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const token = field(ctx, 'token') ?? ''
  const asking = await callerOrSignIn(ctx, `${authUrl(ctx, '/organizations/invitation')}?${new URLSearchParams({ token })}`)
  if ('response' in asking) return asking.response
  try {
    const { organization, cookies } = await asking.engine.accept(asking.caller, token)
    if (jsonClient(ctx)) return { json: { organization }, cookies, headers: { 'Cache-Control': 'no-store' } }
    return { redirect: await backTo(ctx), cookies }
  } catch (error) {
    return refusal(ctx, error)
  }
}

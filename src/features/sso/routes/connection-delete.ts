/** POST /sso/connections/delete `{ csrfToken, connectionId }`: removes a connection. JSON `{ deleted: id }`; browsers back to the SSO page. */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPath } from './shared.js'

export const deleteConnectionAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const connectionId = posted(ctx, 'connectionId')
  try {
    const organizationId = await (await loadManage()).deleteConnection(asking.caller, connectionId)
    return jsonClient(ctx) ? jsonAnswer({ deleted: connectionId }) : backTo(ctx, ssoPath(organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

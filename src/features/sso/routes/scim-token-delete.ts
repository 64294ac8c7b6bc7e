/** POST /sso/connections/scim-token/delete `{ csrfToken, connectionId }`: revokes the connection's SCIM token. JSON `{ connection }`; browsers back to the SSO page. */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { ssoOf } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPath } from './shared.js'

export const revokeScimTokenAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  try {
    const { revokeScimToken } = await import('../scim/issue.js')
    const connection = await revokeScimToken(asking.caller, ssoOf(ctx.config, 'POST /sso/connections/scim-token/delete'), posted(ctx, 'connectionId'))
    return jsonClient(ctx) ? jsonAnswer({ connection }) : backTo(ctx, ssoPath(connection.organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

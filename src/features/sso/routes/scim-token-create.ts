/**
 * POST /sso/connections/scim-token `{ csrfToken, connectionId }`: makes the connection's SCIM token
 * (replacing the one before). JSON 201 `{ token, connection }`, the token given this once; a
 * browser's form gets the SSO page showing it this once (never cached).
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { ssoOf } from '../api/context.js'
import { callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPage } from './shared.js'

export const createScimTokenAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  try {
    const { createScimToken } = await import('../scim/issue.js')
    const made = await createScimToken(asking.caller, ssoOf(ctx.config, 'POST /sso/connections/scim-token'), posted(ctx, 'connectionId'))
    if (jsonClient(ctx)) return jsonAnswer(made, { status: 201 })
    return await ssoPage(ctx, asking.caller, made.connection.organizationId, { scimToken: { connectionId: made.connection.id, token: made.token } })
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

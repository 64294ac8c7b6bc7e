/** POST /api-keys/revoke `{ csrfToken, id, organizationId? }`: revokes one of the user's (or the organization's) keys; JSON `{ revoked: id }`, or back to the page. */
import { assertCsrf, authUrl, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { field, jsonClient, refusal, requestOwner, userOrSignIn } from './shared.js'

export const revokeApiKeyAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await userOrSignIn(ctx)
  if ('response' in asking) return asking.response
  const id = field(ctx, 'id')
  try {
    await (await loadManage()).revokeKey(ctx.config, asking.userId, id, await requestOwner(ctx, asking.userId))
  } catch (error) {
    return refusal(ctx, asking.userId, error)
  }
  return jsonClient(ctx) ? { json: { revoked: id } } : { redirect: authUrl(ctx, '/api-keys') }
}

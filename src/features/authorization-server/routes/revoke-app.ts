/** POST /oauth-apps/revoke: removes an app's access to the signed-in user's account (CSRF-checked). */
import { assertCsrf, authUrl, stringValue, type Action } from '../../../actions/context.js'
import { wantsJson } from '../../../http/request.js'
import { revokeApp } from '../manage.js'
import { appsUser } from './apps.js'

export const revokeAppAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await appsUser(ctx)
  if ('response' in asking) return asking.response
  const clientId = stringValue(ctx.body.clientId)
  const revoked = clientId ? await revokeApp(ctx.config, asking.userId, clientId) : false
  if (wantsJson(ctx.req)) return revoked ? { json: { revoked: true } } : { status: 404, json: { error: 'NotFound', message: 'No app with this client id has access to your account.' } }
  return { redirect: `${authUrl(ctx, '/oauth-apps')}${revoked ? '?notice=removed' : ''}` }
}

/** GET /sso?organizationId=: the organization's SSO page (browsers), or `{ connections, domains }` as JSON. */
import type { Action } from '../../../actions/context.js'
import { loadManage, ssoOf } from '../api/context.js'
import { callerOrSignIn, jsonAnswer, jsonClient, refusal, ssoPage, ssoPath } from './shared.js'

export const ssoPageAction: Action = async (ctx) => {
  const organizationId = ctx.query.get('organizationId') ?? ''
  const asking = await callerOrSignIn(ctx, ssoPath(organizationId))
  if ('response' in asking) return asking.response
  try {
    if (!jsonClient(ctx)) return await ssoPage(ctx, asking.caller, organizationId)
    const manage = await loadManage()
    const connections = await manage.listConnections(asking.caller, ssoOf(ctx.config, 'GET /sso'), organizationId)
    return jsonAnswer({ connections, domains: await manage.listDomains(asking.caller, organizationId) })
  } catch (error) {
    return refusal(ctx, asking.caller, error, undefined)
  }
}

/** POST /sso/domains/delete `{ csrfToken, domainId }`: removes a domain. JSON `{ deleted: id }`; browsers back to the SSO page. */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPath } from './shared.js'

export const deleteDomainAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const domainId = posted(ctx, 'domainId')
  try {
    const organizationId = await (await loadManage()).removeDomain(asking.caller, domainId)
    return jsonClient(ctx) ? jsonAnswer({ deleted: domainId }) : backTo(ctx, ssoPath(organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

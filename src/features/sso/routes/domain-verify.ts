/** POST /sso/domains/verify `{ csrfToken, domainId }`: looks up the domain's TXT record and marks it verified. JSON `{ domain }`; browsers back to the SSO page. */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage, ssoOf } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPath } from './shared.js'

export const verifyDomainAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  try {
    const domain = await (await loadManage()).verifyDomain(asking.caller, ssoOf(ctx.config, 'POST /sso/domains/verify'), posted(ctx, 'domainId'))
    return jsonClient(ctx) ? jsonAnswer({ domain }) : backTo(ctx, ssoPath(domain.organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

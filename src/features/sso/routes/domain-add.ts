/** POST /sso/domains `{ csrfToken, organizationId, domain }`: claims a domain, unverified. JSON 201 `{ domain }` (with its TXT record); browsers back to the SSO page. */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted, refusal, ssoPath } from './shared.js'

export const addDomainAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const organizationId = posted(ctx, 'organizationId')
  const asking = await callerOrSignIn(ctx, ssoPath(String(organizationId ?? '')))
  if ('response' in asking) return asking.response
  try {
    const domain = await (await loadManage()).addDomain(asking.caller, organizationId, posted(ctx, 'domain'))
    return jsonClient(ctx) ? jsonAnswer({ domain }, { status: 201 }) : backTo(ctx, ssoPath(domain.organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

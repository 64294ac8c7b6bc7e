/**
 * POST /sso/connections/update `{ csrfToken, connectionId, name?, defaultRole?, enabled?, ssoOnly?,
 * clientSecret?, metadataXml?, metadataUrl?, allowIdpInitiated? }`: changes a connection of one of the
 * user's organizations. JSON `{ connection }`; browsers back to the SSO page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage, ssoOf } from '../api/context.js'
import type { SsoConnectionChanges } from '../manage.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, optionalText, posted, postedFlag, refusal, ssoPath } from './shared.js'

export const updateConnectionAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const changes = {
    name: optionalText(ctx, 'name'),
    defaultRole: optionalText(ctx, 'defaultRole'),
    enabled: postedFlag(ctx, 'enabled'),
    ssoOnly: postedFlag(ctx, 'ssoOnly'),
    clientSecret: optionalText(ctx, 'clientSecret'),
    metadataXml: optionalText(ctx, 'metadataXml'),
    metadataUrl: optionalText(ctx, 'metadataUrl'),
    allowIdpInitiated: postedFlag(ctx, 'allowIdpInitiated'),
  } as SsoConnectionChanges
  try {
    const connection = await (await loadManage()).updateConnection(asking.caller, ssoOf(ctx.config, 'POST /sso/connections/update'), posted(ctx, 'connectionId'), changes)
    return jsonClient(ctx) ? jsonAnswer({ connection }) : backTo(ctx, ssoPath(connection.organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, posted(ctx, 'organizationId'))
  }
}

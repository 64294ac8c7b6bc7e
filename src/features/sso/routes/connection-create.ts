/**
 * POST /sso/connections `{ csrfToken, organizationId, name, type, … }`: registers a connection of one
 * of the user's organizations (`organization: ['update']`). OIDC: `issuer`, `clientId`, `clientSecret`,
 * `scopes?`; SAML: `metadataXml` or `metadataUrl`, `allowIdpInitiated?`; both: `defaultRole?`,
 * `ssoOnly?`. JSON 201 `{ connection }`; browsers back to the SSO page.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage, ssoOf } from '../api/context.js'
import type { NewSsoConnection } from '../manage.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, optionalText, posted, postedFlag, refusal, ssoPath } from './shared.js'

export const createConnectionAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const organizationId = posted(ctx, 'organizationId')
  const asking = await callerOrSignIn(ctx, ssoPath(String(organizationId ?? '')))
  if ('response' in asking) return asking.response
  const scopes = posted(ctx, 'scopes')
  const input = {
    organizationId,
    name: posted(ctx, 'name'),
    type: posted(ctx, 'type'),
    defaultRole: optionalText(ctx, 'defaultRole'),
    ssoOnly: postedFlag(ctx, 'ssoOnly'),
    issuer: optionalText(ctx, 'issuer'),
    clientId: optionalText(ctx, 'clientId'),
    clientSecret: optionalText(ctx, 'clientSecret'),
    // A form's scopes are one field, space-separated, as OAuth writes them.
    scopes: typeof scopes === 'string' && !jsonClient(ctx) ? (scopes.trim() === '' ? undefined : scopes.trim().split(/\s+/)) : scopes,
    metadataXml: optionalText(ctx, 'metadataXml'),
    metadataUrl: optionalText(ctx, 'metadataUrl'),
    allowIdpInitiated: postedFlag(ctx, 'allowIdpInitiated'),
  } as NewSsoConnection
  try {
    const connection = await (await loadManage()).createConnection(asking.caller, ssoOf(ctx.config, 'POST /sso/connections'), input)
    return jsonClient(ctx) ? jsonAnswer({ connection }, { status: 201 }) : backTo(ctx, ssoPath(connection.organizationId))
  } catch (error) {
    return refusal(ctx, asking.caller, error, organizationId)
  }
}

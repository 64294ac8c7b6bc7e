/**
 * GET /saml-metadata/<connection id>: this site's SAML service provider metadata for one connection
 * (its entity id is this URL; its Assertion Consumer Service), for the organization's admin to give
 * their identity provider. Public, as metadata is: it holds no secret.
 */
import type { ActionContext } from '../../../actions/context.js'
import type { AuthResponse } from '../../../http/respond.js'
import { ssoAdapter } from '../adapter.js'
import { acsUrl, isSaml, spEntityId } from '../connection.js'

export const samlMetadata =
  (connectionId: string) =>
  async (ctx: ActionContext): Promise<AuthResponse> => {
    const connection = await ssoAdapter(ctx.config).getSsoConnection(connectionId)
    if (!connection || !isSaml(connection)) return { status: 404, json: { error: 'NotFound', message: 'No SAML connection of this id.' } }
    const { serviceProviderMetadata } = await import('../saml/index.js')
    const xml = await serviceProviderMetadata({ entityId: spEntityId(ctx, connection.id), acsUrl: acsUrl(ctx, connection.id) })
    return { text: xml, headers: { 'Content-Type': 'application/samlmetadata+xml; charset=utf-8', 'Cache-Control': 'public, max-age=300' } }
  }

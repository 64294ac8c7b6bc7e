/**
 * The server-side `listSsoConnections`, `createSsoConnection`, `updateSsoConnection` and
 * `deleteSsoConnection`: an organization's identity providers, managed by its members whose roles
 * grant `organization: ['update']` (owners and admins).
 */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { NewSsoConnection, SsoConnectionChanges } from '../manage.js'
import type { SsoConnection } from '../types.js'
import { ssoCall, type SsoCallContext } from './context.js'

/**
 * An organization's connections, oldest first: each with what its identity provider needs of this
 * site (an OIDC redirect URI; a SAML entity id, ACS URL and metadata URL), never a client secret.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; UnknownActionError (no SSO provider)
 * @example
 * ```ts
 * app.get('/orgs/:id/sso', async (req, res) => res.json(await listSsoConnections(req, { organizationId: req.params.id })))
 * ```
 */
export type ListSsoConnectionsFunction = (req: SsoCallContext, options: { organizationId: string }) => Promise<SsoConnection[]>

/** What `createSsoConnection` takes. */
export type CreateSsoConnectionOptions = NewSsoConnection & CsrfOptions

/**
 * Registers an identity provider for an organization: OpenID Connect (`issuer`, `clientId`,
 * `clientSecret`: the issuer is discovered first, and a connection that cannot work is refused) or
 * SAML 2.0 (`metadataXml`, or `metadataUrl` fetched now). Its addresses sign in through it once a
 * domain of the organization is verified (`addSsoDomain`, `verifySsoDomain`). CSRF-checked.
 * @throws SsoError `invalid_input`, `invalid_metadata`; OrganizationError `not_signed_in`, `not_found`, `forbidden`, `limit_reached`; MissingCSRFError
 * @example
 * ```ts
 * await createSsoConnection(req, {
 *   organizationId, name: 'Acme Okta', type: 'oidc',
 *   issuer: 'https://acme.okta.com', clientId: '0oa…', clientSecret: process.env.ACME_SECRET!,
 *   skipCsrfCheck: true,
 * })
 * ```
 */
export type CreateSsoConnectionFunction = (req: SsoCallContext, options: CreateSsoConnectionOptions) => Promise<SsoConnection>

/** What `updateSsoConnection` takes. */
export interface UpdateSsoConnectionOptions extends SsoConnectionChanges, CsrfOptions {
  connectionId: string
}

/**
 * Changes a connection: its name, default role, `enabled`, `ssoOnly`; an OIDC one's client secret; a
 * SAML one's metadata (a certificate rollover) or `allowIdpInitiated`. CSRF-checked.
 * @throws SsoError `invalid_input`, `invalid_metadata`; OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 */
export type UpdateSsoConnectionFunction = (req: SsoCallContext, options: UpdateSsoConnectionOptions) => Promise<SsoConnection>

/**
 * Removes a connection. Its users keep their accounts and memberships and sign in another way (an
 * SSO-only organization's rule goes with its last SSO-only connection). CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 */
export type DeleteSsoConnectionFunction = (req: SsoCallContext, options: { connectionId: string } & CsrfOptions) => Promise<void>

export function createListSsoConnections(api: Api): ListSsoConnectionsFunction {
  return async (given, options) => {
    const { caller, sso, manage } = await ssoCall(api, given, 'listSsoConnections()')
    return manage.listConnections(caller, sso, options?.organizationId)
  }
}

export function createCreateSsoConnection(api: Api): CreateSsoConnectionFunction {
  return async (given, options) => {
    const { caller, sso, manage } = await ssoCall(api, given, 'createSsoConnection()', options ?? {})
    const { csrfToken: _token, skipCsrfCheck: _skip, ...input } = options
    return manage.createConnection(caller, sso, input as NewSsoConnection)
  }
}

export function createUpdateSsoConnection(api: Api): UpdateSsoConnectionFunction {
  return async (given, options) => {
    const { caller, sso, manage } = await ssoCall(api, given, 'updateSsoConnection()', options ?? {})
    const { connectionId, csrfToken: _token, skipCsrfCheck: _skip, ...changes } = options
    return manage.updateConnection(caller, sso, connectionId, changes)
  }
}

export function createDeleteSsoConnection(api: Api): DeleteSsoConnectionFunction {
  return async (given, options) => {
    const { caller, manage } = await ssoCall(api, given, 'deleteSsoConnection()', options ?? {})
    await manage.deleteConnection(caller, options.connectionId)
  }
}

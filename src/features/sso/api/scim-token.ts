/**
 * The server-side `createSsoScimToken` and `revokeSsoScimToken`: a connection's bearer token for SCIM
 * provisioning (docs/sso.md, "SCIM provisioning"), managed by the organization's members whose roles
 * grant `organization: ['update']`.
 */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { SsoConnection } from '../types.js'
import { ssoCall, type SsoCallContext } from './context.js'

let engine: Promise<typeof import('../scim/issue.js')> | undefined
const loadIssue = (): Promise<typeof import('../scim/issue.js')> => (engine ??= import('../scim/issue.js'))

/**
 * Makes the connection's SCIM bearer token, replacing the one before it (which stops working at
 * once), and gives it this once: only its SHA-256 is stored. Give it to the identity provider with
 * `connection.scim.baseUrl`. CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 * @see https://www.rfc-editor.org/rfc/rfc7644#section-2 (SCIM authentication: a bearer token)
 * @example
 * ```ts
 * const { token, connection } = await createSsoScimToken(req, { connectionId, skipCsrfCheck: true })
 * // Okta: SCIM connector base URL = connection.scim.baseUrl, HTTP Header = `Bearer ${token}`
 * ```
 */
export type CreateSsoScimTokenFunction = (req: SsoCallContext, options: { connectionId: string } & CsrfOptions) => Promise<{ token: string; connection: SsoConnection }>

/**
 * Revokes the connection's SCIM token: every request with it is refused from now on. CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 */
export type RevokeSsoScimTokenFunction = (req: SsoCallContext, options: { connectionId: string } & CsrfOptions) => Promise<SsoConnection>

export function createCreateSsoScimToken(api: Api): CreateSsoScimTokenFunction {
  return async (given, options) => {
    const { caller, sso } = await ssoCall(api, given, 'createSsoScimToken()', options ?? {})
    return (await loadIssue()).createScimToken(caller, sso, options.connectionId)
  }
}

export function createRevokeSsoScimToken(api: Api): RevokeSsoScimTokenFunction {
  return async (given, options) => {
    const { caller, sso } = await ssoCall(api, given, 'revokeSsoScimToken()', options ?? {})
    return (await loadIssue()).revokeScimToken(caller, sso, options.connectionId)
  }
}

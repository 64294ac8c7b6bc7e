/**
 * Who a SCIM request speaks for: the connection whose bearer token it carries (RFC 7644 §2: the
 * token in the `Authorization` header, never in the URL), and through it one organization. Every
 * handler reads and changes only that organization's members and teams. A missing, malformed,
 * unknown, revoked or replaced token, and a disabled connection's, all get the same 401.
 */
import type { ResolvedConfig } from '../../../config/types.js'
import { InvalidConfigurationError } from '../../../errors.js'
import type { NodeRequest } from '../../../http/request.js'
import type { Adapter } from '../../../types.js'
import { ssoAdapter, type SsoAdapter } from '../adapter.js'
import { ssoProviderOf, type SsoProvider } from '../config.js'
import type { AdapterSsoConnection } from '../types.js'
import { ScimError } from './errors.js'
import { connectionIdOfScimToken, scimTokenMatches } from './token.js'

/** The adapter methods the SCIM endpoints call besides the wing's. */
const SCIM_METHODS = ['getUser', 'getUserByEmail', 'createUser', 'updateUser', 'getUserByAccount', 'getAccountsByUserId', 'linkAccount', 'unlinkAccount', 'removeMember', 'listMembers'] as const

export type ScimAdapter = SsoAdapter & Required<Pick<Adapter, (typeof SCIM_METHODS)[number]>>

/** One authenticated SCIM request. */
export interface ScimCall {
  readonly config: ResolvedConfig
  readonly sso: SsoProvider
  readonly connection: AdapterSsoConnection
  readonly adapter: ScimAdapter
  readonly req: NodeRequest
  /** `<origin><basePath>/scim/v2`, for `meta.location`. */
  readonly baseUrl: string
  readonly query: URLSearchParams
}

/** The most resources one list answers (ServiceProviderConfig's `filter.maxResults`). */
export const MAX_RESULTS = 100

/** The token's connection. @throws ScimError 401 */
export async function authenticate(req: NodeRequest, config: ResolvedConfig, query: URLSearchParams): Promise<{ sso: SsoProvider; connection: AdapterSsoConnection; adapter: ScimAdapter }> {
  // A token in a URL ends up in access logs, proxies' logs and browser history: refused, not read.
  if (query.has('access_token')) throw new ScimError(401, 'Send the token in the Authorization header (Bearer); a token in the URL is refused.')
  const sso = ssoProviderOf(config)!
  const header = req.headers.authorization ?? ''
  const token = /^Bearer +(\S+) *$/i.exec(header)?.[1]
  const connectionId = token === undefined ? null : connectionIdOfScimToken(token)
  const connection = connectionId === null ? null : await ssoAdapter(config).getSsoConnection(connectionId)
  if (!token || !connection || !connection.enabled || !scimTokenMatches(token, connection.settings.scimTokenHash)) {
    throw new ScimError(401, 'A valid SCIM bearer token of an enabled connection is required (Authorization: Bearer <token>).')
  }
  return { sso, connection, adapter: scimAdapter(config) }
}

function scimAdapter(config: ResolvedConfig): ScimAdapter {
  const adapter = config.adapter as Record<string, unknown>
  const missing = SCIM_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`SCIM provisioning needs an adapter with ${missing.join(', ')} (KnexAdapter has them). See docs/sso.md.`)
  return adapter as unknown as ScimAdapter
}

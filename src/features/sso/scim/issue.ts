/**
 * A connection's SCIM token, made and revoked by the organization's admins (`organization:
 * ['update']`, as for the connection itself). Making one replaces the one before: the token is
 * given once, and only its SHA-256 is kept, in the connection's settings. Loaded on the first call.
 */
import { emitEvent } from '../../../events.js'
import type { Caller } from '../../organizations/call.js'
import { OrganizationError } from '../../organizations/errors.js'
import { ssoAdapter } from '../adapter.js'
import type { SsoProvider } from '../config.js'
import { connectionShape } from '../connection.js'
import { managedConnection } from '../manage.js'
import type { AdapterSsoConnection, SsoConnection } from '../types.js'
import { generateScimToken, scimTokenHash } from './token.js'

/** Makes the connection's SCIM token (replacing any before it). @throws OrganizationError `not_found`, `forbidden` */
export async function createScimToken(caller: Caller, sso: SsoProvider, connectionId: unknown): Promise<{ token: string; connection: SsoConnection }> {
  const current = await managedConnection(caller, connectionId)
  const token = generateScimToken(current.id)
  const settings = { ...current.settings, scimTokenHash: scimTokenHash(token), scimTokenCreatedAt: new Date(Date.now()).toISOString() }
  return { token, connection: await saved(caller, sso, current, settings) }
}

/** Revokes the connection's SCIM token: its identity provider provisions nobody until a new one is made. */
export async function revokeScimToken(caller: Caller, sso: SsoProvider, connectionId: unknown): Promise<SsoConnection> {
  const current = await managedConnection(caller, connectionId)
  const { scimTokenHash: _hash, scimTokenCreatedAt: _at, ...settings } = current.settings
  return saved(caller, sso, current, settings as AdapterSsoConnection['settings'])
}

async function saved(caller: Caller, sso: SsoProvider, current: AdapterSsoConnection, settings: AdapterSsoConnection['settings']): Promise<SsoConnection> {
  const updated = await ssoAdapter(caller.ctx.config).updateSsoConnection(current.id, { settings })
  if (!updated) throw new OrganizationError('not_found', 'No such connection among your organizations.')
  const connection = connectionShape(caller.ctx, sso, updated)
  await emitEvent(caller.ctx.config, 'ssoConnectionUpdated', { connection, userId: caller.userId })
  return connection
}

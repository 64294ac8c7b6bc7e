/**
 * What `active` means for a provisioned user: the membership of the connection's organization.
 * Deactivating (`active: false`, or DELETE) removes it, the organizations wing's rule held (the last
 * owner stays: 409), and ends every session of the user at once, JWT ones too (with a session store),
 * as an administrator's `revokeUserSessions` does; the user row stays. Activating again makes them a
 * member with the connection's default role.
 */
import { emitEvent } from '../../../events.js'
import { sessionRequestFor } from '../../../http/request.js'
import { logValue } from '../../../logger.js'
import { revokeOwnSessions } from '../../../session/devices.js'
import { OWNER_ROLE } from '../../organizations/access.js'
import type { ScimCall } from './call.js'
import { ScimError } from './errors.js'

/** Makes the user a member again, when they are not. */
export async function activate(call: ScimCall, userId: string, externalId: string | null, reactivated: boolean): Promise<void> {
  const { organizationId, defaultRole, id: connectionId } = call.connection
  if (await call.adapter.getMember(organizationId, userId)) return
  // addMember answers null when a concurrent request made the membership first: that one tells.
  if (!(await call.adapter.addMember({ organizationId, userId, roles: [defaultRole] }))) return
  await emitEvent(call.config, 'memberAdded', { organizationId, userId, roles: [defaultRole], by: null })
  await emitEvent(call.config, 'ssoUserProvisioned', { connectionId, organizationId, userId, externalId, reactivated })
}

/**
 * Removes the user's membership and ends their sessions (once: a user already inactive is left as is).
 * @throws ScimError 409 for the organization's last owner
 */
export async function deactivate(call: ScimCall, userId: string, deleted: boolean): Promise<void> {
  const { organizationId, id: connectionId } = call.connection
  const change = await call.adapter.removeMember(organizationId, userId, OWNER_ROLE)
  if (change === 'last_owner') throw new ScimError(409, 'This user is the organization\'s last owner: make another member owner before deprovisioning them.')
  if (change === 'not_found' && !deleted) return
  const sessionsEnded = change === 'done' ? await endSessions(call, userId) : 0
  if (change === 'done') await emitEvent(call.config, 'memberRemoved', { organizationId, userId, by: null })
  await emitEvent(call.config, 'ssoUserDeprovisioned', { connectionId, organizationId, userId, deleted, sessionsEnded })
}

async function endSessions(call: ScimCall, userId: string): Promise<number> {
  const { config } = call
  if (config.session.strategy === 'jwt' && !config.session.store) {
    // Without a store a JWT session has no record to end; it lasts until it expires (docs/sso.md).
    config.logger.warn('ScimSessionsNotEnded', `SCIM deprovisioned user ${logValue(userId)}, whose JWT sessions cannot be ended without session.store: they last until they expire.`)
    return 0
  }
  return (await revokeOwnSessions(sessionRequestFor(call.req, config), { userId, sessionId: undefined }, {}, 'scimDeprovisioned', { everyToken: true })).length
}

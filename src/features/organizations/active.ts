/**
 * The session's active organization: switched by `setActiveOrganization` (CSRF-checked), only to an
 * organization the user is a member of (read from the database), with their roles there sealed into
 * a JWT session's claim or read by a database session's join. Switching to none is allowed.
 */
import { emitEvent } from '../../events.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { setSessionField } from '../../session/session-field.js'
import { membershipOf, type Caller } from './call.js'
import { OrganizationError } from './errors.js'
import { activeOrganizationField } from './session-field.js'
import { membershipShape } from './shapes.js'
import type { OrganizationMembership } from './types.js'

/**
 * Makes `organizationId` (null: none) the active organization of the caller's session.
 * @returns The organization with the caller's roles (null for none), and the cookies that carry the session (JWT).
 * @throws OrganizationError `not_found` when the caller is not a member, `not_signed_in` when the session is gone.
 */
export async function switchOrganization(caller: Caller, organizationId: unknown): Promise<{ organization: OrganizationMembership | null; cookies: OutgoingCookie[] }> {
  const found = organizationId === null ? null : await membershipOf(caller, organizationId)
  const value = found ? { id: found.organization.id, roles: [...found.member.roles] } : undefined
  const cookies = await setSessionField(caller.ctx, activeOrganizationField, value)
  if (cookies === null) throw new OrganizationError('not_signed_in', 'The session ended before the switch.')
  await emitEvent(caller.ctx.config, 'activeOrganizationChanged', { userId: caller.userId, organizationId: found?.organization.id ?? null })
  return { organization: found ? membershipShape(found.organization, found.member) : null, cookies }
}

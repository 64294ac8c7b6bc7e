/**
 * The active organization as a field of the session's user (`SessionUserField`, applied by the
 * core's two session strategies): `session.user.activeOrganization`, `{ id, roles }` or null. A field
 * of the session, not of the user (`perSession`): JWT sessions carry it in their own claim, sealed at
 * sign-in and at each switch; database sessions keep the organization's id on the session row, and
 * the session read's one join brings the member's roles there (none once they are removed). At
 * sign-in it is the user's oldest membership. Loaded with the feature's declaration: it runs on every
 * session read, so it imports nothing heavy.
 */
import type { ResolvedConfig, SessionUserField } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { parseStoredRoles } from '../roles/stored.js'
import type { ActiveOrganization } from './types.js'

/** The claim (and `session.user` field) that carries it. */
export const ACTIVE_ORGANIZATION_CLAIM = 'activeOrganization'

/**
 * What the session carries as the active organization, from a claim or a join's row, or null. A valid
 * value is frozen in place (its roles a frozen list): a token's claims are shared by every read of its
 * cookie, so later reads take it as it is, without a copy.
 */
export function activeOrganizationOf(value: unknown): ActiveOrganization | null {
  if (!value || typeof value !== 'object') return null
  if (Object.isFrozen(value)) return value as ActiveOrganization
  const { id, roles } = value as { id?: unknown; roles?: unknown }
  if (typeof id !== 'string' || id.length === 0) return null
  const list = Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : parseStoredRoles(roles)
  // Removed from it (a database session's join finds no membership): no active organization.
  if (!list || list.length === 0) return null
  return Object.freeze(Object.assign(value, { roles: Object.freeze(list) })) as ActiveOrganization
}

export const activeOrganizationField: SessionUserField = {
  name: ACTIVE_ORGANIZATION_CLAIM,
  perSession: (value) => ({ activeOrganizationId: (value as ActiveOrganization | undefined)?.id ?? null }),
  fromClaim: (_config, claim) => activeOrganizationOf(claim),
  fromUser(_config, value) {
    if (value === undefined) {
      throw new InvalidConfigurationError('The organizations option with database sessions needs the adapter\'s getSessionAndUser to return the active organization when asked ({ with: ["activeOrganization"] }); KnexAdapter does, after the organizations migration.')
    }
    return activeOrganizationOf(value)
  },
  async atSignIn(config: ResolvedConfig, userId: string) {
    const list = config.adapter?.listOrganizationsOfUser
    if (!list) throw new InvalidConfigurationError('The organizations option needs an adapter with listOrganizationsOfUser(); KnexAdapter has it.')
    const [oldest] = await list.call(config.adapter, userId)
    // None: no claim, and the session shows null.
    return oldest ? { id: oldest.organization.id, roles: [...oldest.member.roles] } : undefined
  },
}

/**
 * The roles as a field of the session's user (`SessionUserField`, applied by the core's two session
 * strategies): `session.user.roles`. JWT sessions carry them in the `roles` claim, written at sign-in
 * from the users table and left out for a user with none stored (the default roles, and the
 * smallest token); database sessions read them in `getSessionAndUser`'s join. This module is loaded
 * with the feature's declaration: it runs on every session read, so it imports nothing heavy.
 */
import type { ResolvedConfig, SessionUserField } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { ResolvedRoles } from './config.js'
import { claimedRoles, parseStoredRoles } from './stored.js'

/** The claim (and `session.user` field) that carries the roles. */
export const ROLES_CLAIM = 'roles'

// Resolved only when the option is on: the feature is enabled by it.
const rolesOf = (config: ResolvedConfig): ResolvedRoles => config.features.roles as ResolvedRoles

export const rolesField: SessionUserField = {
  name: ROLES_CLAIM,
  fromClaim: (config, claim) => claimedRoles(claim) ?? rolesOf(config).defaultRoles,
  fromUser(config, value) {
    if (value === undefined) {
      throw new InvalidConfigurationError('The roles option with database sessions needs the adapter\'s getSessionAndUser to return the user\'s roles when asked ({ with: ["roles"] }); KnexAdapter does.')
    }
    const roles = Array.isArray(value) ? (value.filter((role) => typeof role === 'string') as string[]) : parseStoredRoles(value)
    return roles && roles.length > 0 ? Object.freeze(roles) : rolesOf(config).defaultRoles
  },
  async atSignIn(config, userId) {
    const getUserRoles = config.adapter?.getUserRoles
    if (!getUserRoles) throw new InvalidConfigurationError('The roles option needs an adapter with getUserRoles(); KnexAdapter has it.')
    // None stored: no claim, and the session shows the default roles.
    return (await getUserRoles.call(config.adapter, userId)) ?? undefined
  },
}

/**
 * The `roles` option, resolved once at init into a frozen object: the access definition and the
 * roles of a user who has none stored. It needs an adapter with `getUserRoles` and `setUserRoles`.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig } from '../../config/types.js'
import type { AccessControl } from './access.js'

/** The resolved option, `config.features.roles`. */
export interface ResolvedRoles {
  readonly access: AccessControl
  /** Frozen: what a user with no stored roles has. */
  readonly defaultRoles: readonly string[]
}

/** @throws InvalidConfigurationError saying what to change. */
export function resolveRoles(option: PortcullisConfig['roles']): ResolvedRoles | undefined {
  if (option === undefined) return undefined
  const given = isAccess(option) ? { access: option, defaultRoles: undefined } : option
  if (!given || typeof given !== 'object' || !isAccess(given.access)) {
    throw new InvalidConfigurationError('roles must be what defineAccess({ statements, roles }) returns, or { access: defineAccess(...), defaultRoles }. See docs/roles.md.')
  }
  const { access } = given
  const defaultRoles = given.defaultRoles ?? ['user']
  if (!Array.isArray(defaultRoles) || defaultRoles.length === 0 || !defaultRoles.every((role) => access.isRole(role))) {
    throw new InvalidConfigurationError(`roles.defaultRoles must be a non-empty list of the defined roles (${access.roleNames.join(', ')}); got ${JSON.stringify(defaultRoles)}.`)
  }
  return Object.freeze({ access, defaultRoles: Object.freeze([...defaultRoles]) })
}

function isAccess(value: unknown): value is AccessControl {
  return typeof value === 'object' && value !== null && typeof (value as AccessControl).can === 'function' && Array.isArray((value as AccessControl).roleNames)
}

/** The resolved option of `config`. @throws InvalidConfigurationError when it is off. */
export function rolesOf(config: { readonly features: Readonly<Record<string, unknown>> }, what: string): ResolvedRoles {
  const roles = config.features.roles as ResolvedRoles | undefined
  if (!roles) throw new InvalidConfigurationError(`${what} needs the roles option: Portcullis({ roles: defineAccess({ statements, roles }) }). See docs/roles.md.`)
  return roles
}

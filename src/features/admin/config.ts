/**
 * The `admin` option at init, and what it needs of the rest: the roles option, whose statements
 * hold the admin actions (`adminStatements`), and an adapter that lists users.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import './types.js'

/**
 * The admin API's actions, to put among the `roles` option's statements:
 * `defineAccess({ statements: { ...adminStatements, post: ['create'] } })`. The `admin` role has them all.
 */
export const adminStatements = Object.freeze({ user: Object.freeze(['list', 'create', 'update', 'set-role', 'revoke-sessions', 'ban', 'delete', 'reset-two-factor', 'send-reset-link', 'impersonate'] as const) })

/** The `admin` option as resolved at init. */
export interface ResolvedAdmin {
  /** The longest impersonation, in seconds (default 3600). */
  readonly impersonationMaxAge: number
  /** Whether a user whose roles grant an admin action may be impersonated (default false). */
  readonly impersonateAdmins: boolean
}

/** The longest impersonation that can be configured: a day. */
const MAX_IMPERSONATION = 24 * 60 * 60

/** Resolves `admin`: undefined when it is off. @throws InvalidConfigurationError */
export function resolveAdmin(input: PortcullisConfig['admin']): ResolvedAdmin | undefined {
  if (input === undefined || input === false) return undefined
  if (input === true) return Object.freeze({ impersonationMaxAge: 3600, impersonateAdmins: false })
  if (typeof input !== 'object' || input === null) throw new InvalidConfigurationError('admin must be true, false or an object ({ impersonationMaxAge, impersonateAdmins }).')
  const { impersonationMaxAge = 3600, impersonateAdmins = false, ...unknown } = input
  const extra = Object.keys(unknown)
  if (extra.length > 0) throw new InvalidConfigurationError(`admin: unknown option ${extra.map((key) => `'${key}'`).join(', ')} (it takes impersonationMaxAge and impersonateAdmins).`)
  if (!Number.isInteger(impersonationMaxAge) || impersonationMaxAge < 60 || impersonationMaxAge > MAX_IMPERSONATION) {
    throw new InvalidConfigurationError(`admin.impersonationMaxAge must be a whole number of seconds from 60 to ${MAX_IMPERSONATION} (a day).`)
  }
  if (typeof impersonateAdmins !== 'boolean') throw new InvalidConfigurationError('admin.impersonateAdmins must be true or false.')
  return Object.freeze({ impersonationMaxAge, impersonateAdmins })
}

/** The resolved `admin` option of a config that turns it on. */
export function adminOf(config: ResolvedConfig): ResolvedAdmin {
  return config.features.admin as ResolvedAdmin
}

/** @throws InvalidConfigurationError when roles are off, their statements lack the admin actions, or the adapter cannot list users. */
export function assertAdmin(config: ResolvedConfig): void {
  const roles = config.features.roles as { access: { statements: Readonly<Record<string, readonly string[]>> } } | undefined
  if (!roles) throw new InvalidConfigurationError('admin checks each caller\'s permission: it needs the roles option, e.g. roles: defineAccess({ statements: { ...adminStatements } }). See docs/admin.md.')
  const user = roles.access.statements.user ?? []
  const missing = adminStatements.user.filter((action) => !user.includes(action))
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`admin: the roles' statements have no user: [${missing.map((action) => `'${action}'`).join(', ')}]. Spread adminStatements into them: defineAccess({ statements: { ...adminStatements, … } }).`)
  }
  if (typeof config.adapter?.listUsers !== 'function') throw new InvalidConfigurationError('admin lists users: it needs an adapter with listUsers() (KnexAdapter has it).')
}

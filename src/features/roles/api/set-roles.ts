/**
 * The server-side `setRoles(userId, roles)` and `getRoles(userId)`: for the app's own admin code (and
 * the admin API to come), never a route. No request is involved, so no user can call them on
 * themselves: there is no route that sets roles, and a session's roles cannot be written from the
 * client (see docs/roles.md).
 *
 * A change reaches every session of the user: database sessions at once (their join reads the
 * column); JWT sessions with `session.store`, by ending them all through the store, as a sign-out
 * everywhere does (every process refuses them within `revocationCacheSeconds`; the user signs in
 * again and gets a token with the new roles); JWT sessions without a store keep the roles of their
 * token until it expires (`jwt.maxAge`) — nothing on the server can reach a cookie.
 */
import type { Api } from '../../../api/context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { InvalidConfigurationError } from '../../../errors.js'
import { emitEvent } from '../../../events.js'
import { revokeOwnSessions, type RevokedBy } from '../../../session/devices.js'
import type { SessionRequest } from '../../../session/types.js'
import type { Adapter } from '../../../types.js'
import type { AccessControl } from '../access.js'
import { rolesOf, type ResolvedRoles } from '../config.js'

/** What `setRoles` did. */
export interface SetRolesResult {
  /** False when there is no such user (nothing changed). */
  readonly found: boolean
  /** Whether the stored roles changed. */
  readonly changed: boolean
  /** The JWT sessions ended through the store (0 with database sessions, which see the change at once). */
  readonly sessionsEnded: number
}

/**
 * Sets the user's roles (`null` or `[]`: the default roles). Server-side only: call it from your own
 * admin code, after checking that the caller may (e.g. `hasPermission(req, { user: ['set-role'] })`).
 *
 * @throws TypeError for a role the definition does not have.
 * @throws InvalidConfigurationError when the `roles` option is off.
 * @example
 * ```ts
 * await setRoles(userId, ['editor'])
 * ```
 */
export type SetRolesFunction<A extends AccessControl = AccessControl> = (userId: string, roles: readonly A['roleNames'][number][] | null) => Promise<SetRolesResult>

/**
 * The user's stored roles, or the default roles when none are stored (or there is no such user).
 * @throws InvalidConfigurationError when the `roles` option is off.
 */
export type GetRolesFunction = (userId: string) => Promise<readonly string[]>

export function createSetRoles(api: Api): SetRolesFunction {
  return async (userId, roles) => {
    const resolved = rolesOf(api.config, 'setRoles()')
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('setRoles(userId, roles): userId must be a non-empty string.')
    const wanted = checkedRoles(resolved, roles)
    const adapter = roleAdapter(api)
    const previous = await adapter.getUserRoles(userId)
    if (!(await adapter.setUserRoles(userId, wanted))) return { found: false, changed: false, sessionsEnded: 0 }
    if (sameRoles(previous, wanted)) return { found: true, changed: false, sessionsEnded: 0 }
    const sessionsEnded = await endJwtSessions(api.config, userId, 'rolesChanged')
    await emitEvent(api.config, 'roleChanged', { userId, roles: wanted, previous })
    return { found: true, changed: true, sessionsEnded }
  }
}

export function createGetRoles(api: Api): GetRolesFunction {
  return async (userId) => {
    const resolved = rolesOf(api.config, 'getRoles()')
    return (await roleAdapter(api).getUserRoles(userId)) ?? resolved.defaultRoles
  }
}

/**
 * With JWT sessions and a store: ends every session of the user, tokens from before the store
 * included (by their age), as `signOutEverywhere` does; the store's change reaches every process
 * within `revocationCacheSeconds`. Refused rather than refreshed: a refresh would have every
 * process read the user's roles again on a session read that costs no query today. The
 * organizations wing ends a member's sessions so after a change of their membership.
 * @returns How many sessions ended (0 with database sessions, whose read sees the change at once).
 */
export async function endJwtSessions(config: ResolvedConfig, userId: string, by: RevokedBy): Promise<number> {
  if (config.session.strategy !== 'jwt' || !config.session.store) return 0
  const request: SessionRequest = { config, cookieSet: config.cookieSets.secure, requestCookies: {}, now: Math.floor(Date.now() / 1000) }
  return (await revokeOwnSessions(request, { userId, sessionId: undefined }, {}, by, { everyToken: true })).length
}

function checkedRoles({ access }: ResolvedRoles, roles: readonly string[] | null): string[] | null {
  if (roles === null) return null
  if (!Array.isArray(roles)) throw new TypeError('setRoles(userId, roles): roles must be a list of role names, or null for the default roles.')
  for (const role of roles) {
    if (!access.isRole(role)) throw new TypeError(`setRoles(): ${JSON.stringify(role)} is not a defined role (${access.roleNames.join(', ')}).`)
  }
  const unique = [...new Set(roles)]
  return unique.length > 0 ? unique : null
}

function sameRoles(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b
  return a.length === b.length && a.every((role) => b.includes(role))
}

function roleAdapter(api: Api): Required<Pick<Adapter, 'getUserRoles' | 'setUserRoles'>> {
  const { adapter } = api.config
  if (!adapter?.getUserRoles || !adapter.setUserRoles) throw new InvalidConfigurationError('The roles option needs an adapter with getUserRoles() and setUserRoles(); KnexAdapter has them.')
  return adapter as Required<Pick<Adapter, 'getUserRoles' | 'setUserRoles'>>
}

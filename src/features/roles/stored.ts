/**
 * A user's roles as stored (one column, comma-separated) and as the session carries them (a frozen
 * list): the conversions, and the check of what the session or the store gives back.
 */

/** The longest stored value (the twelfth migration's column holds 255 characters). */
export const MAX_STORED_LENGTH = 255

/** `roles` as the column stores them; `null` for none. */
export function storedRoles(roles: readonly string[] | null): string | null {
  return roles === null || roles.length === 0 ? null : roles.join(',')
}

/** The stored value as a list; `null` when empty. */
export function parseStoredRoles(value: unknown): string[] | null {
  if (typeof value !== 'string' || value.length === 0) return null
  const roles = value.split(',').filter((role) => role.length > 0)
  return roles.length > 0 ? roles : null
}

/**
 * A list of role names from a token's claim, frozen in place (a cached token's claims are shared by
 * every read of its cookie), or undefined when it is none.
 */
export function claimedRoles(claim: unknown): readonly string[] | undefined {
  if (!Array.isArray(claim)) return undefined
  for (let i = 0; i < claim.length; i++) if (typeof claim[i] !== 'string') return undefined
  return Object.isFrozen(claim) ? (claim as readonly string[]) : (Object.freeze(claim) as readonly string[])
}

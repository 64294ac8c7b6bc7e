/**
 * What a session records of its last confirmation, as the two strategies write it at sign-in and
 * confirmation.ts reads and rewrites it (a module of its own, below both: no import circle).
 */
import type { JWT } from '../types.js'

/** The claim of a JWT session that says when it was last confirmed (seconds since the epoch). */
export const AUTH_TIME_CLAIM = 'auth_time'
/** The claim that says how: the sign-in's provider id, or the confirmation's method. */
export const AUTH_METHOD_CLAIM = 'auth_method'

/** The longest method name recorded (the migration's column holds 64 characters). */
const MAX_METHOD_LENGTH = 64

/** The claims a new or confirmed JWT session carries. */
export function confirmationClaims(method: string | null | undefined, now: number): JWT {
  return { [AUTH_TIME_CLAIM]: now, [AUTH_METHOD_CLAIM]: methodName(method) }
}

/** `method`, cut to what the database column holds; null when there is none. */
export function methodName(method: string | null | undefined): string | null {
  return typeof method === 'string' && method.length > 0 ? method.slice(0, MAX_METHOD_LENGTH) : null
}

/**
 * Deep freezing, for what is shared and must not change: the resolved config, and the claims the
 * token cache hands to every request that reads the same cookie.
 */

/**
 * Freezes `value` and every plain object and array below it. Other objects (class instances, a
 * Map, an adapter) are left as they are, and so is everything below an object already frozen.
 * Runs on the session-read path (each newly cached token), hence for…in rather than Object.values:
 * no array per object.
 */
export function deepFreeze<T>(value: T): T {
  if (!value || typeof value !== 'object' || Object.isFrozen(value)) return value
  const proto: unknown = Object.getPrototypeOf(value)
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value
  Object.freeze(value)
  for (const key in value) if (Object.hasOwn(value, key)) deepFreeze(value[key])
  return value
}

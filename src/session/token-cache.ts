/**
 * Session tokens opened moments ago. A browser sends the same session cookie on every request
 * until `updateAge` re-issues it, so most reads repeat a cookie this instance has just decrypted:
 * keep what it held, keyed by the exact cookie value, and skip the decrypt.
 *
 * Bounded (least recently used out first) and per key ring, so per instance and cookie flavour.
 * Only tokens that opened are kept: a bad cookie is decrypted, and refused, every time. A hit
 * re-checks the time claims against the request's clock, as openSessionToken does, so an expired
 * token is refused from the cache too, and parses the claims afresh, so a caller that mutates
 * the token or the session (a `jwt` callback, `req.auth`) cannot change what the next request sees.
 */
import type { KeyRing } from './keys.js'
import { CLOCK_TOLERANCE, openSessionToken, type OpenedToken } from './token.js'

interface Entry {
  plaintext: string
  exp: number | undefined
  nbf: number | undefined
}

const caches = new WeakMap<KeyRing, Map<string, Entry>>()

/**
 * Opens `sealed` with `ring`, from the cache when this instance opened it before.
 *
 * @param size The most tokens kept for this ring; `0` opens every time.
 * @returns The claims and their JSON (a fresh object on every call), or `null`.
 */
export function openCachedSessionToken(sealed: string, ring: KeyRing, now: number, size: number): OpenedToken | null {
  if (size === 0) return openSessionToken(sealed, ring, now)
  let cache = caches.get(ring)
  if (!cache) caches.set(ring, (cache = new Map()))
  const hit = cache.get(sealed)
  if (hit) {
    if ((hit.exp !== undefined && hit.exp <= now - CLOCK_TOLERANCE) || (hit.nbf !== undefined && hit.nbf > now + CLOCK_TOLERANCE)) {
      cache.delete(sealed)
      return null
    }
    // Most recently used last: Map keeps insertion order.
    cache.delete(sealed)
    cache.set(sealed, hit)
    return { payload: JSON.parse(hit.plaintext), plaintext: hit.plaintext }
  }
  const opened = openSessionToken(sealed, ring, now)
  if (!opened) return null
  const { exp, nbf } = opened.payload as { exp?: number; nbf?: number }
  cache.set(sealed, { plaintext: opened.plaintext, exp, nbf })
  if (cache.size > size) cache.delete(cache.keys().next().value!)
  return opened
}

/** How many tokens are cached for `ring` (for tests and the bench). */
export function cachedTokenCount(ring: KeyRing): number {
  return caches.get(ring)?.size ?? 0
}

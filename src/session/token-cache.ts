/**
 * Session tokens opened moments ago. A browser sends the same session cookie on every request
 * until `updateAge` re-issues it, so most reads repeat a cookie this instance has just decrypted:
 * keep what it held and skip the decrypt.
 *
 * - **Keyed by the token's authentication tag** (its last part, 43 characters for A256CBC-HS512),
 *   and a hit must also be the exact cookie value: hashing the short tag instead of the whole
 *   ~600-character cookie is most of what a lookup costs. A cookie carrying a cached token's tag
 *   with anything else changed misses, is decrypted, and fails its tag check.
 * - **Cached the second time it is opened**: a token opened once is only remembered by a 30-bit
 *   fingerprint of its tag (among the last `2 × size` such). A cookie that comes once (a client
 *   without a cookie jar, a crawler with a fresh session) never costs an entry, which in a loaded
 *   server costs more than the map operations suggest: every entry outlives many requests, so the
 *   garbage collector copies it to the old generation and marks it there.
 * - **Bounded**, oldest out first. A hit moves its entry to the young end only once it has aged
 *   past half the bound (approximately least recently used, without reordering the map on
 *   every read): a token read at least once per `size / 2` new tokens stays.
 * - **Per key ring**, so per instance and cookie flavour. Only tokens that opened are kept: a bad
 *   cookie is decrypted, and refused, every time.
 * - **Every hit re-checks the time claims** against the request's clock, as openSessionToken does,
 *   so an expired token is refused from the cache too.
 * - **The claims are shared between requests and frozen**: callers read them and hand app code
 *   (callbacks, events) a copy of their own (`ownClaims`), so nothing an app does to a token or a
 *   session can change what the next request sees.
 */
import { deepFreeze } from '../freeze.js'
import type { JWT } from '../types.js'
import type { KeyRing } from './keys.js'
import { CLOCK_TOLERANCE, openSessionToken, type OpenedToken } from './token.js'

interface Entry {
  /** The whole cookie value: a hit must match it exactly, not just its tag. */
  readonly sealed: string
  readonly opened: OpenedToken
  readonly exp: number | undefined
  readonly nbf: number | undefined
  /** The cache's insertion count when this entry last went in at the young end. */
  stamp: number
}

interface Cache {
  readonly entries: Map<string, Entry>
  /** Insertions so far, moves included: the clock the entries' ages are told by. */
  insertions: number
  /** Fingerprints of tokens opened once and not cached (yet), and the same in arrival order. */
  readonly seen: Set<number>
  readonly seenOrder: Int32Array
  /** Where the next fingerprint goes in `seenOrder`, the oldest one's place once it is full. */
  seenNext: number
}

const caches = new WeakMap<KeyRing, Cache>()

/**
 * Opens `sealed` with `ring`, from the cache when this instance opened it before.
 *
 * @param size The most tokens kept for this ring; `0` opens every time.
 * @returns The claims (frozen, shared between requests when `size > 0`: copy with `ownClaims`
 *   before handing them to app code) and their JSON, or `null`.
 */
export function openCachedSessionToken(sealed: string, ring: KeyRing, now: number, size: number): OpenedToken | null {
  if (size === 0) return openSessionToken(sealed, ring, now)
  let cache = caches.get(ring)
  if (!cache) caches.set(ring, (cache = { entries: new Map(), insertions: 0, seen: new Set(), seenOrder: new Int32Array(2 * size).fill(-1), seenNext: 0 }))
  const { entries } = cache
  const key = tagOf(sealed)
  const hit = entries.get(key)
  if (hit !== undefined && hit.sealed === sealed) {
    if ((hit.exp !== undefined && hit.exp <= now - CLOCK_TOLERANCE) || (hit.nbf !== undefined && hit.nbf > now + CLOCK_TOLERANCE)) {
      entries.delete(key)
      return null
    }
    if (cache.insertions - hit.stamp > size >>> 1) {
      // Map keeps insertion order: re-inserting makes it the youngest.
      entries.delete(key)
      entries.set(key, hit)
      hit.stamp = ++cache.insertions
    }
    return hit.opened
  }
  const opened = openSessionToken(sealed, ring, now)
  if (!opened || !seenBefore(cache, key)) return opened
  const shared: OpenedToken = { payload: deepFreeze(opened.payload), plaintext: opened.plaintext, shared: true }
  const { exp, nbf } = shared.payload as { exp?: number; nbf?: number }
  // A different token under a cached tag (a forgery would not have opened) replaces it.
  if (hit !== undefined) entries.delete(key)
  entries.set(key, { sealed, opened: shared, exp, nbf, stamp: ++cache.insertions })
  if (entries.size > size) entries.delete(entries.keys().next().value!)
  return shared
}

/**
 * Claims the caller may change and hand to app code: a copy when they are the cache's shared ones,
 * else the opened object itself (already the caller's own).
 */
export function ownClaims(opened: OpenedToken): JWT {
  return opened.shared ? (JSON.parse(opened.plaintext) as JWT) : opened.payload
}

/** How many tokens are cached for `ring` (for tests and the bench). */
export function cachedTokenCount(ring: KeyRing): number {
  return caches.get(ring)?.entries.size ?? 0
}

/**
 * Whether a token with this tag opened here before (and was not cached then); remembers it if not.
 * The fingerprint is the tag's first 5 characters folded into 30 bits (a small integer, so the set
 * allocates nothing); the tag is an HMAC, so two tokens share one by chance about once in a billion,
 * and that costs the other one a cache entry, nothing more.
 * Only tokens that opened get here, so a client cannot fill it without valid cookies.
 */
function seenBefore(cache: Cache, tag: string): boolean {
  let print = 0
  for (let i = 0; i < 5; i++) print = (print << 6) ^ tag.charCodeAt(i)
  print &= 0x3fffffff
  if (cache.seen.delete(print)) return true
  const { seenOrder } = cache
  const oldest = seenOrder[cache.seenNext]!
  if (oldest !== -1) cache.seen.delete(oldest)
  seenOrder[cache.seenNext] = print
  cache.seenNext = (cache.seenNext + 1) % seenOrder.length
  cache.seen.add(print)
  return false
}

/** The compact JWE's last part (its authentication tag), or the whole value when it has no dot. */
function tagOf(sealed: string): string {
  return sealed.slice(sealed.lastIndexOf('.') + 1)
}

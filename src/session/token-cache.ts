/**
 * Session tokens opened moments ago. A browser sends the same session cookie on every request
 * until `updateAge` re-issues it, so most reads repeat a cookie this instance has just decrypted:
 * keep what it held and skip the decrypt.
 *
 * - **Keyed by a 30-bit fingerprint of the token's authentication tag** (its last part, an HMAC),
 *   and a hit must also be the exact cookie value: a small integer key costs the map nothing to
 *   hash, where the ~600-character cookie (or even the 43-character tag) would be hashed on every
 *   read. A cookie carrying a cached token's tag with anything else changed misses, is decrypted,
 *   and fails its tag check; two genuine tokens sharing a fingerprint (about once in a billion)
 *   only take each other's place.
 * - **Cached the second time it is opened**: a token opened once is only remembered by its
 *   fingerprint (among the last `2 × size` such). A cookie that comes once (a client without a
 *   cookie jar, a crawler with a fresh session) never costs an entry, which in a loaded server
 *   costs more than the map operations suggest: every entry outlives many requests, so the
 *   garbage collector copies it to the old generation and marks it there.
 * - **Bounded, with a second chance** (the CLOCK approximation of least recently used): a hit
 *   only marks its entry as read. When a new token needs room, the oldest entry goes, unless it
 *   was read since it last came to the front: then it goes to the young end, unmarked, and the
 *   next oldest is looked at. A token read once per pass of the cache stays, and a hit never
 *   reorders the map, so a server whose browsers fit in the cache moves no entry at all.
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
import { CBC_TAG_CHARS, DOT, SEXTET } from './jwe.js'
import type { KeyRing } from './keys.js'
import { CLOCK_TOLERANCE, openSessionToken, type OpenedToken } from './token.js'

interface Entry {
  /** The whole cookie value: a hit must match it exactly, not just its tag. */
  readonly sealed: string
  readonly opened: OpenedToken
  readonly exp: number | undefined
  readonly nbf: number | undefined
  /** Read since it last went in at the young end: it gets a second chance before it is evicted. */
  read: boolean
}

interface Cache {
  readonly entries: Map<number, Entry>
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
  if (!cache) caches.set(ring, (cache = { entries: new Map(), seen: new Set(), seenOrder: new Int32Array(2 * size).fill(-1), seenNext: 0 }))
  const { entries } = cache
  const key = tagFingerprint(sealed)
  const hit = entries.get(key)
  if (hit !== undefined && hit.sealed === sealed) {
    if ((hit.exp !== undefined && hit.exp <= now - CLOCK_TOLERANCE) || (hit.nbf !== undefined && hit.nbf > now + CLOCK_TOLERANCE)) {
      entries.delete(key)
      return null
    }
    hit.read = true
    return hit.opened
  }
  const opened = openSessionToken(sealed, ring, now)
  if (!opened || !seenBefore(cache, key)) return opened
  const shared: OpenedToken = { payload: deepFreeze(opened.payload), plaintext: opened.plaintext, shared: true }
  const { exp, nbf } = shared.payload as { exp?: number; nbf?: number }
  // A different token under a cached fingerprint (a forgery would not have opened) replaces it.
  if (hit !== undefined) entries.delete(key)
  else makeRoom(entries, size - 1)
  entries.set(key, { sealed, opened: shared, exp, nbf, read: false })
  return shared
}

/**
 * Evicts entries until at most `limit` are left: each time the oldest one not read since it last
 * came to the front. The read ones passed on the way go to the young end, unmarked.
 */
function makeRoom(entries: Map<number, Entry>, limit: number): void {
  while (entries.size > limit) {
    const [key, oldest] = entries.entries().next().value!
    entries.delete(key)
    if (!oldest.read) return
    oldest.read = false
    entries.set(key, oldest)
  }
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
 * Whether a token with this fingerprint opened here before (and was not cached then); remembers it
 * if not. Only tokens that opened get here, so a client cannot fill it without valid cookies.
 */
function seenBefore(cache: Cache, print: number): boolean {
  if (cache.seen.delete(print)) return true
  const { seenOrder } = cache
  const oldest = seenOrder[cache.seenNext]!
  if (oldest !== -1) cache.seen.delete(oldest)
  seenOrder[cache.seenNext] = print
  cache.seenNext = (cache.seenNext + 1) % seenOrder.length
  cache.seen.add(print)
  return false
}

/**
 * The first 5 characters of the compact JWE's last part (its authentication tag; the whole value
 * when it has no dot), 6 bits each: a 30-bit integer, so a map keyed by it allocates and hashes
 * nothing. The tag is an HMAC, so two tokens share a fingerprint by chance once in 2^30 (about a
 * billion): the characters' values, not their codes, which overlap when shifted by 6 bits.
 * Exported for tests.
 */
export function tagFingerprint(sealed: string): number {
  // A256CBC-HS512's tag is 32 bytes, 43 characters: where a token has that shape, the tag is found
  // without a search (`lastIndexOf` is a call into the engine's runtime, about 400 instructions on V8).
  const end = sealed.length - CBC_TAG_CHARS
  const tag = sealed.charCodeAt(end - 1) === DOT ? end : sealed.lastIndexOf('.') + 1
  let print = 0
  // A character outside the alphabet (or past the end) gives some 6 bits; such a token does not open anyway.
  for (let i = tag; i < tag + 5; i++) print = (print << 6) | (SEXTET[sealed.charCodeAt(i) & 127]! & 63)
  return print
}

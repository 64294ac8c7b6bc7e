/**
 * The opened-key cache: a key found by its hash is trusted in this process's memory for
 * `apiKeys.cacheSeconds` (default 5), so a busy script's requests cost one database lookup each
 * few seconds, not one each. Bounded (`cacheSize`, the oldest entry dropped first). Revoking or
 * rotating a key, or deleting its owner's account, in this process forgets it at once; another
 * process may accept it until its own entry ends, at most `cacheSeconds` later (docs/api-keys.md).
 */
import type { ResolvedConfig } from '../../config/types.js'
import type { AdapterUser } from '../../types.js'
import type { AdapterApiKey, ApiKeyOwner } from './types.js'

/** A key as the lookup found it, with its owner. */
export interface OpenedKey {
  readonly key: AdapterApiKey
  readonly user: AdapterUser
  /** Until when the owner is banned (ms; Infinity: until lifted), when they are. */
  readonly bannedUntil?: number | undefined
  /** When this process last wrote its last use (ms), so it asks the database at most once a minute. */
  touchedAt: number
}

interface Entry {
  readonly opened: OpenedKey
  readonly until: number
}

/** One instance's cache: by key hash, with the hash of each key id for forgetting. */
class KeyCache {
  private readonly byHash = new Map<string, Entry>()
  private readonly hashById = new Map<string, string>()

  constructor(
    private readonly ttlMs: number,
    private readonly size: number,
  ) {}

  get(hash: string, now: number): OpenedKey | undefined {
    const entry = this.byHash.get(hash)
    if (!entry) return undefined
    if (entry.until > now) return entry.opened
    this.delete(hash)
    return undefined
  }

  set(hash: string, opened: OpenedKey, now: number): void {
    if (this.ttlMs === 0 || this.size === 0) return
    this.delete(hash)
    while (this.byHash.size >= this.size) this.delete(this.byHash.keys().next().value as string)
    this.byHash.set(hash, { opened, until: now + this.ttlMs })
    this.hashById.set(opened.key.id, hash)
  }

  forget(id: string): void {
    const hash = this.hashById.get(id)
    if (hash !== undefined) this.delete(hash)
  }

  /** Forgets every key of `owner` (a scan: it runs when an account is deleted, not per request). */
  forgetOwner(owner: ApiKeyOwner): void {
    for (const [hash, { opened }] of this.byHash) if (opened.key.owner.type === owner.type && opened.key.owner.id === owner.id) this.delete(hash)
  }

  private delete(hash: string): void {
    const entry = this.byHash.get(hash)
    if (!entry) return
    this.byHash.delete(hash)
    this.hashById.delete(entry.opened.key.id)
  }
}

const caches = new WeakMap<ResolvedConfig, KeyCache>()

/** The cache of `config`'s instance. */
export function keyCache(config: ResolvedConfig, ttlMs: number, size: number): KeyCache {
  let cache = caches.get(config)
  if (!cache) caches.set(config, (cache = new KeyCache(ttlMs, size)))
  return cache
}

/** Forgets key `id` in this process (revoked, rotated). */
export function forgetKey(config: ResolvedConfig, id: string): void {
  caches.get(config)?.forget(id)
}

/** Forgets every key of `owner` in this process (their account was deleted). */
export function forgetOwner(config: ResolvedConfig, owner: ApiKeyOwner): void {
  caches.get(config)?.forgetOwner(owner)
}

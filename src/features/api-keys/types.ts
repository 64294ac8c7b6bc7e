/**
 * What the API keys wing adds to the shared interfaces, by module augmentation: its option on
 * `PortcullisConfig`, its adapter methods on `Adapter`, its events on `EventsOptions`; and the
 * shapes its functions and `req.auth` use.
 */
import type { ISODateString, SessionUser } from '../../types.js'

/** Who owns a key: a user, or an organization (the `organizations` option), managed by its members whose roles there grant `apiKey: ['manage']`. */
export type ApiKeyOwner = { type: 'user'; id: string } | { type: 'organization'; id: string }

/** A fixed window: at most `max` requests in `windowSeconds`. */
export interface ApiKeyRateLimit {
  max: number
  windowSeconds: number
}

/** A usage quota: `remaining` requests, restored to `refillAmount` every `refillInterval` seconds when set. */
export interface ApiKeyQuota {
  remaining: number
  refillAmount?: number | undefined
  refillInterval?: number | undefined
}

/**
 * The `apiKeys` option: keys for scripts, jobs and other services, created by signed-in users, sent
 * as `Authorization: Bearer <key>` (or the `header`). See docs/api-keys.md.
 */
export interface ApiKeysOptions {
  /**
   * The fixed start of every key, which secret scanners look for: letters and digits in groups joined
   * and ended by `_`, at most 20 characters. Default `pc_live_`.
   */
  prefix?: string | undefined
  /** A header that carries the key besides `Authorization: Bearer` (lower case). Default `x-api-key`; `false` for Bearer only. */
  header?: string | false | undefined
  /** The scopes a key may be given; a request for another is refused. Default: any scope token. */
  scopes?: readonly string[] | undefined
  /** Seconds a new key lives unless its creator says otherwise. Default: no expiry. */
  defaultExpiresIn?: number | undefined
  /** The longest life a key may be given, in seconds. Default: no limit. */
  maxExpiresIn?: number | undefined
  /** Each key's requests per window unless the key has its own; `false` for none. Default 1,000 per 60 s. */
  rateLimit?: ApiKeyRateLimit | false | undefined
  /**
   * Seconds an opened key is trusted in this process's memory before the database is asked again
   * (revoking it in this process forgets it at once; another process may accept it this long). Default 5; 0 turns the cache off.
   */
  cacheSeconds?: number | undefined
  /** How many opened keys the cache holds. Default 1,000. */
  cacheSize?: number | undefined
  /** The most keys one owner may have (unexpired, unrevoked). Default 100. */
  maxKeysPerOwner?: number | undefined
}

/** A key as stored (never the key itself: its SHA-256). */
export interface AdapterApiKey {
  id: string
  /** SHA-256 of the whole key, hex. */
  keyHash: string
  /** What lists show: the prefix and the first and last characters, e.g. `pc_live_AbCd…wXyZ`. */
  display: string
  name: string
  owner: ApiKeyOwner
  /** The user who created it. */
  createdBy: string | null
  scopes: string[]
  metadata: Record<string, unknown> | null
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
  rateLimit: ApiKeyRateLimit | null
  quota: (ApiKeyQuota & { lastRefillAt: Date | null }) | null
}

/** A key as `listApiKeys()` and the page show it. */
export interface ApiKeyInfo {
  id: string
  name: string
  /** The prefix and the first and last characters of the key. */
  display: string
  owner: ApiKeyOwner
  scopes: string[]
  metadata: Record<string, unknown> | null
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  rateLimit: ApiKeyRateLimit | null
  /** The requests left of its quota, when it has one. */
  remaining: number | null
}

/** A new key: shown once, stored only as its hash. */
export interface CreatedApiKey extends ApiKeyInfo {
  /** The key itself. Show it to the user now: it cannot be read back. */
  key: string
}

/**
 * `req.auth` (and what `auth()` resolves) for a request that sent an API key. A `Session` with the
 * key's owner as `user`, so code written for sessions reads it; `type` tells it apart.
 */
export interface ApiKeyAuth {
  type: 'apiKey'
  /** The key's id (what `revokeApiKey()` takes). */
  id: string
  name: string
  scopes: string[]
  owner: ApiKeyOwner
  /**
   * The owning user: `{ id, name, email, image }`. For an organization's key, the organization
   * (`{ id, name, email: null, image: logo }`): `owner.type` tells them apart.
   */
  user: SessionUser
  /** When the key expires; `9999-12-31T23:59:59.999Z` for a key without expiry. */
  expires: ISODateString
  metadata: Record<string, unknown> | null
  [key: string]: unknown
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * API keys for scripts, jobs and other services: created by signed-in users, sent as
     * `Authorization: Bearer <key>`, scoped, limited, revocable. Needs an adapter with the API key
     * methods (KnexAdapter's eighth migration). See `ApiKeysOptions` and docs/api-keys.md.
     */
    apiKeys?: ApiKeysOptions | boolean | undefined
  }
}

declare module '../../types.js' {
  interface Adapter {
    /** Stores a new key (`apiKeys` option). */
    createApiKey?(key: AdapterApiKey): Promise<AdapterApiKey>
    /** The key with this hash and its owner, by the hash's unique index (an organization standing as the user of its keys); null when there is none or its owner is gone. */
    getApiKeyByHash?(keyHash: string): Promise<{ key: AdapterApiKey; user: import('../../types.js').AdapterUser; ownerBan?: { bannedAt: Date; expiresAt: Date | null } | undefined } | null>
    /** One key of the owner, or null. */
    getApiKey?(id: string, owner: ApiKeyOwner): Promise<AdapterApiKey | null>
    /** The owner's keys, newest first (revoked and expired ones included, until pruned). */
    listApiKeys?(owner: ApiKeyOwner): Promise<AdapterApiKey[]>
    /** Revokes one key of the owner (it expires at `at` too, for the prune): `true` when it was valid. */
    revokeApiKey?(id: string, owner: ApiKeyOwner, at: Date): Promise<boolean>
    /** Moves the expiry of one key of the owner to `at` unless it expires sooner (rotation's grace): `true` when it changed. */
    expireApiKey?(id: string, owner: ApiKeyOwner, at: Date): Promise<boolean>
    /** Sets `lastUsedAt` to `now` in one conditional UPDATE, only when it is older than `before` (or unset). */
    touchApiKey?(id: string, now: Date, before: Date): Promise<void>
    /** Takes one request off the key's quota (refilled first when due), in conditional UPDATEs: `false` when none is left. */
    useApiKeyQuota?(id: string, now: Date): Promise<boolean>
  }
  interface EventsOptions {
    /** A user created an API key (`createApiKey()`, the page, or a rotation's new key). Never the key itself. */
    apiKeyCreated?: ((message: { userId: string; owner: ApiKeyOwner; keyId: string; name: string; scopes: string[]; rotatedFrom?: string | undefined }) => import('../../types.js').Awaitable<void>) | undefined
    /** An API key was revoked (`revokeApiKey()` or the page); `userId` is who revoked it. */
    apiKeyRevoked?: ((message: { userId: string; owner: ApiKeyOwner; keyId: string }) => import('../../types.js').Awaitable<void>) | undefined
  }
}

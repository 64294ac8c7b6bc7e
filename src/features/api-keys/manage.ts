/**
 * Creating, listing, revoking and rotating the keys of an owner (a user, or an organization its
 * member manages): what the server-side functions (api/) and the routes (routes/) share, on plain
 * values; who may act for the owner is settled before (api/context.ts, routes/shared.ts). Loaded on
 * the first management call.
 */
import { randomUUID } from 'node:crypto'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { emitEvent } from '../../events.js'
import { forgetKey } from './cache.js'
import { apiKeysOf, rateLimitOf, SCOPE_TOKEN, type ApiKeyAdapter, type ResolvedApiKeys } from './config.js'
import { ApiKeyError } from './errors.js'
import { displayOf, generateKey, keyHash } from './format.js'
import { userOwner } from './owner.js'
import type { AdapterApiKey, ApiKeyInfo, ApiKeyOwner, ApiKeyQuota, ApiKeyRateLimit, CreatedApiKey } from './types.js'

/** What a new key is given. */
export interface NewApiKey {
  /** What the user calls it ("CI deploys"), 1 to 100 characters. */
  name: string
  /** What it may do; default none (`requireScopes()` with any scope refuses it). */
  scopes?: readonly string[] | undefined
  /** Seconds it lives; default `apiKeys.defaultExpiresIn` (none). */
  expiresIn?: number | undefined
  /** The app's own JSON data about it (at most 4 KB as JSON), returned with the key and on `req.auth`. */
  metadata?: Record<string, unknown> | undefined
  /** Its own rate limit instead of `apiKeys.rateLimit`. */
  rateLimit?: ApiKeyRateLimit | undefined
  /** A usage quota, refilled when `refillAmount` and `refillInterval` are given. */
  quota?: ApiKeyQuota | undefined
}

function adapterOf(config: ResolvedConfig): ApiKeyAdapter {
  return config.adapter as ApiKeyAdapter
}

/** Whether a stored key still works at `now`. */
export function isValid(key: AdapterApiKey, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now)
}

/** A key as lists show it. */
export function infoOf(key: AdapterApiKey): ApiKeyInfo {
  return {
    id: key.id,
    name: key.name,
    display: key.display,
    owner: { ...key.owner },
    scopes: [...key.scopes],
    metadata: key.metadata,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    rateLimit: key.rateLimit,
    remaining: key.quota?.remaining ?? null,
  }
}

/**
 * Creates a key of `owner` by user `userId`, returned once.
 * @throws ApiKeyError `invalid_input`, `too_many_keys`
 */
export async function createKey(config: ResolvedConfig, userId: string, input: NewApiKey, rotatedFrom?: string, owner: ApiKeyOwner = userOwner(userId)): Promise<CreatedApiKey> {
  const options = apiKeysOf(config)!
  const checked = checkInput(options, input)
  const now = Date.now()
  // A rotation's old key is on its way out: it does not count against the owner's limit.
  const valid = (await adapterOf(config).listApiKeys(owner)).filter((key) => isValid(key, now) && key.id !== rotatedFrom)
  if (valid.length >= options.maxKeysPerOwner) throw new ApiKeyError('too_many_keys', `${owner.type === 'user' ? 'You have' : 'The organization has'} ${valid.length} API keys, the most allowed: revoke one first.`)
  const key = generateKey(options.prefix)
  const stored: AdapterApiKey = {
    id: randomUUID(),
    keyHash: keyHash(key),
    display: displayOf(key, options.prefix),
    name: checked.name,
    owner,
    createdBy: userId,
    scopes: checked.scopes,
    metadata: checked.metadata,
    createdAt: new Date(now),
    expiresAt: checked.expiresIn === undefined ? null : new Date(now + checked.expiresIn * 1000),
    revokedAt: null,
    lastUsedAt: null,
    rateLimit: checked.rateLimit,
    quota: checked.quota ? { ...checked.quota, lastRefillAt: null } : null,
  }
  await adapterOf(config).createApiKey(stored)
  await emitEvent(config, 'apiKeyCreated', { userId, owner: { ...owner }, keyId: stored.id, name: stored.name, scopes: [...stored.scopes], ...(rotatedFrom ? { rotatedFrom } : {}) })
  return { ...infoOf(stored), key }
}

/** The owner's keys, newest first. */
export async function listKeys(config: ResolvedConfig, owner: ApiKeyOwner): Promise<ApiKeyInfo[]> {
  return (await adapterOf(config).listApiKeys(owner)).map(infoOf)
}

/**
 * Revokes one of the owner's keys (by user `userId`), at once in this process.
 * @throws ApiKeyError `not_found`
 */
export async function revokeKey(config: ResolvedConfig, userId: string, id: unknown, owner: ApiKeyOwner = userOwner(userId)): Promise<void> {
  const keyId = checkId(id)
  const revoked = await adapterOf(config).revokeApiKey(keyId, owner, new Date())
  forgetKey(config, keyId)
  if (!revoked) throw new ApiKeyError('not_found', 'No valid API key of yours has this id.')
  await emitEvent(config, 'apiKeyRevoked', { userId, owner: { ...owner }, keyId })
}

/**
 * A new key with the old one's name, scopes, metadata and limits; the old one keeps working for
 * `gracePeriod` seconds (default 0: it stops now), then expires.
 * @throws ApiKeyError `not_found`, `invalid_input`, `too_many_keys`
 */
export async function rotateKey(config: ResolvedConfig, userId: string, id: unknown, gracePeriod: unknown = 0, owner: ApiKeyOwner = userOwner(userId)): Promise<CreatedApiKey> {
  const keyId = checkId(id)
  if (!Number.isSafeInteger(gracePeriod) || (gracePeriod as number) < 0 || (gracePeriod as number) > 30 * 86_400) {
    throw new ApiKeyError('invalid_input', 'gracePeriod must be a whole number of seconds from 0 to 2,592,000 (30 days).')
  }
  const old = await adapterOf(config).getApiKey(keyId, owner)
  const now = Date.now()
  if (!old || !isValid(old, now)) throw new ApiKeyError('not_found', 'No valid API key of yours has this id.')
  const remaining = old.expiresAt === null ? undefined : Math.max(1, Math.round((old.expiresAt.getTime() - now) / 1000))
  const created = await createKey(
    config,
    userId,
    {
      name: old.name,
      scopes: old.scopes,
      metadata: old.metadata ?? undefined,
      rateLimit: old.rateLimit ?? undefined,
      quota: old.quota ? { remaining: old.quota.remaining, refillAmount: old.quota.refillAmount, refillInterval: old.quota.refillInterval } : undefined,
      // The new key lives as long as the old one had left (a rotation is no way to extend a key past maxExpiresIn).
      expiresIn: remaining,
    },
    keyId,
    owner,
  )
  await adapterOf(config).expireApiKey(keyId, owner, new Date(now + (gracePeriod as number) * 1000))
  forgetKey(config, keyId)
  return created
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 255) throw new ApiKeyError('invalid_input', 'Give the id of one of your API keys (from listApiKeys()).')
  return id
}

// Long: one check per field of the input, each with its message.
function checkInput(
  options: ResolvedApiKeys,
  input: NewApiKey,
): { name: string; scopes: string[]; expiresIn: number | undefined; metadata: Record<string, unknown> | null; rateLimit: ApiKeyRateLimit | null; quota: ApiKeyQuota | null } {
  if (!input || typeof input !== 'object') throw new ApiKeyError('invalid_input', 'Give the new key at least a name: { name }.')
  const name = typeof input.name === 'string' ? input.name.trim() : ''
  if (name.length === 0 || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name)) throw new ApiKeyError('invalid_input', 'The key needs a name of 1 to 100 characters, without control characters.')
  const scopes = input.scopes === undefined ? [] : input.scopes
  if (!Array.isArray(scopes) || scopes.length > 100 || scopes.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))) {
    throw new ApiKeyError('invalid_input', 'scopes must be a list of at most 100 scope names (printable ASCII without spaces, quotes or backslashes).')
  }
  const unknown = options.scopes ? scopes.filter((scope) => !options.scopes!.includes(scope)) : []
  if (unknown.length > 0) throw new ApiKeyError('invalid_input', `Unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: the scopes are ${options.scopes!.join(', ')}.`)
  const expiresIn = input.expiresIn ?? options.defaultExpiresIn
  if (expiresIn !== undefined && (!Number.isSafeInteger(expiresIn) || expiresIn < 1)) throw new ApiKeyError('invalid_input', 'expiresIn must be a whole number of seconds (at least 1).')
  if (options.maxExpiresIn !== undefined && (expiresIn === undefined || expiresIn > options.maxExpiresIn)) {
    throw new ApiKeyError('invalid_input', `A key may live at most ${options.maxExpiresIn} seconds: give expiresIn up to that.`)
  }
  let metadata: Record<string, unknown> | null = null
  if (input.metadata !== undefined) {
    const text = typeof input.metadata === 'object' && input.metadata !== null && !Array.isArray(input.metadata) ? JSON.stringify(input.metadata) : undefined
    if (text === undefined || text.length > 4096) throw new ApiKeyError('invalid_input', 'metadata must be a JSON object of at most 4 KB.')
    metadata = JSON.parse(text) as Record<string, unknown>
  }
  return { name, scopes: [...new Set(scopes)], expiresIn, metadata, rateLimit: limitOf(input.rateLimit), quota: quotaOf(input.quota) }
}

function limitOf(value: ApiKeyRateLimit | undefined): ApiKeyRateLimit | null {
  if (value === undefined) return null
  try {
    return rateLimitOf(value, 'rateLimit')
  } catch (error) {
    if (error instanceof InvalidConfigurationError) throw new ApiKeyError('invalid_input', error.message)
    throw error
  }
}

function quotaOf(value: ApiKeyQuota | undefined): ApiKeyQuota | null {
  if (value === undefined) return null
  const whole = (n: unknown, least: number) => Number.isSafeInteger(n) && (n as number) >= least && (n as number) <= 2_147_483_647
  const { remaining, refillAmount, refillInterval } = value
  if (!whole(remaining, 0) || (refillAmount !== undefined && !whole(refillAmount, 1)) || (refillInterval !== undefined && !whole(refillInterval, 1)) || (refillAmount === undefined) !== (refillInterval === undefined)) {
    throw new ApiKeyError('invalid_input', 'quota must be { remaining, refillAmount?, refillInterval? }: whole numbers, the two refill fields together (refillInterval in seconds).')
  }
  return { remaining, refillAmount, refillInterval }
}

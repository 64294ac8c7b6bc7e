/**
 * Reading an API key from a request (`auth()`, its middleware, `requireScopes()`), loaded on the
 * first request that carries one. In order, each refusal answered before anything costlier:
 * a key in the URL (400, never looked up: it leaked), a malformed key or a wrong checksum (401,
 * never looked up), the lookup by its SHA-256 (cache, then one indexed query, the hash compared in
 * constant time), expired or revoked (401), the owner's ban (401, said), the rate limit (429), the
 * quota (429); then at most once a minute the last use is written. Nothing here logs the key.
 */
import type { CredentialRead, ResolvedConfig } from '../../config/types.js'
import type { IncomingMessage } from 'node:http'
import { sameTokenHash } from '../../mail/token.js'
import { limitRequest } from '../../security/rate-limit.js'
import { describeError } from '../../events.js'
import { keyCache, type OpenedKey } from './cache.js'
import { apiKeysOf, type ApiKeyAdapter, type ResolvedApiKeys } from './config.js'
import { keyInUrl, sentKey } from './sent-key.js'
import { keyHash, wellFormed } from './format.js'
import type { ApiKeyAuth } from './types.js'

/** The last use is written at most this often per key. */
export const TOUCH_INTERVAL_MS = 60_000
const NO_EXPIRY = '9999-12-31T23:59:59.999Z'

/** Reads the request's key: who it authenticates, or why it is refused. */
export async function readApiKey(config: ResolvedConfig, req: IncomingMessage): Promise<CredentialRead> {
  const options = apiKeysOf(config)!
  if (keyInUrl(options, req)) {
    config.logger.warn('ApiKeyInUrl', 'A request sent something with the API key prefix in its URL, where logs, proxies and browser history keep it: refused, without a lookup. Send keys in the Authorization header; treat that key as leaked and revoke it.')
    return refused('invalid_request', 'API keys are not accepted in the URL (logs and referrers keep it): send it as Authorization: Bearer <key>, and revoke this key.')
  }
  const key = sentKey(options, req)
  if (key === undefined || !wellFormed(key, options.prefix)) {
    config.logger.debug('ApiKeyMalformed', 'A request sent an API key that is malformed or whose checksum does not match: refused without a lookup.')
    return refused('invalid_token', 'The API key is malformed: check that it was copied whole.')
  }
  const now = Date.now()
  const opened = await openKey(config, options, key, now)
  if (!opened) return refused('invalid_token', 'The API key is unknown, revoked or expired.')
  const { key: stored } = opened
  if (stored.revokedAt !== null || (stored.expiresAt !== null && stored.expiresAt.getTime() <= now)) {
    config.logger.debug('ApiKeyRefused', `API key ${stored.id} is ${stored.revokedAt !== null ? 'revoked' : 'expired'}.`)
    return refused('invalid_token', 'The API key is unknown, revoked or expired.')
  }
  // A banned owner's keys are refused by name (an expired ban lifts itself), before their limits are counted.
  if (opened.bannedUntil !== undefined && opened.bannedUntil > now) {
    config.logger.debug('ApiKeyOwnerBanned', `API key ${stored.id} belongs to a banned user.`)
    return refused('invalid_token', 'The owner of this API key is banned.')
  }
  // No promise to wait on when neither a rate limit nor a quota applies (`rateLimit: false`, no quota).
  if (stored.quota || (stored.rateLimit ?? options.rateLimit)) {
    const limited = await limits(config, options, opened, now)
    if (limited) return limited
  }
  touch(config, opened, now)
  return { auth: toAuth(opened) }
}

/** The key with this value: from the cache, else by one lookup of its hash, compared in constant time. */
async function openKey(config: ResolvedConfig, options: ResolvedApiKeys, key: string, now: number): Promise<OpenedKey | undefined> {
  const hash = keyHash(key)
  // With `cacheSeconds: 0` nothing is ever cached: no cache is asked.
  const cache = options.cacheMs > 0 ? keyCache(config, options.cacheMs, options.cacheSize) : undefined
  const cached = cache?.get(hash, now)
  if (cached) return cached
  const found = await (config.adapter as ApiKeyAdapter).getApiKeyByHash(hash)
  // The database found the row by the index; the hash is compared again here in constant time, so
  // a database whose comparison ignores case or trailing spaces cannot let a near miss in.
  if (!found || !sameTokenHash(found.key.keyHash, hash)) return undefined
  const ban = found.ownerBan
  const opened: OpenedKey = { key: found.key, user: found.user, touchedAt: found.key.lastUsedAt?.getTime() ?? 0, ...(ban && { bannedUntil: ban.expiresAt?.getTime() ?? Infinity }) }
  cache?.set(hash, opened, now)
  return opened
}

/** The rate limit, then the quota: a refusal, or undefined to go on. */
async function limits(config: ResolvedConfig, options: ResolvedApiKeys, { key }: OpenedKey, now: number): Promise<CredentialRead | undefined> {
  const window = key.rateLimit ?? options.rateLimit
  if (window) {
    const retryAfter = await limitRequest(config, 'api-key', key.id, { attempts: window.max, windowSeconds: window.windowSeconds })
    if (retryAfter !== undefined) {
      config.logger.debug('ApiKeyRateLimited', `API key ${key.id} reached its rate limit (${window.max} per ${window.windowSeconds} s).`)
      return { auth: null, refusal: { error: 'rate_limited', description: `Too many requests with this API key: at most ${window.max} per ${window.windowSeconds} s.`, retryAfter } }
    }
  }
  if (key.quota && !(await (config.adapter as ApiKeyAdapter).useApiKeyQuota(key.id, new Date(now)))) {
    const refill = key.quota.refillInterval
    return { auth: null, refusal: { error: 'rate_limited', description: 'This API key has used up its quota.', retryAfter: refill ?? 86_400 } }
  }
  return undefined
}

/**
 * Writes the last use when this process has not for a minute; the UPDATE's condition keeps it to once a
 * minute across processes. Not awaited. The next write is due one to two minutes later, at random: keys
 * opened together (a restart, a burst of new clients) would otherwise all be written again in the same
 * instant every minute, 5,000 UPDATEs at once for 5,000 keys (about 80 µs on each read of that moment, on SQLite).
 */
function touch(config: ResolvedConfig, opened: OpenedKey, now: number): void {
  if (now - opened.touchedAt < TOUCH_INTERVAL_MS) return
  opened.touchedAt = now + Math.random() * TOUCH_INTERVAL_MS
  ;(config.adapter as ApiKeyAdapter).touchApiKey(opened.key.id, new Date(now), new Date(now - TOUCH_INTERVAL_MS)).catch((error: unknown) => {
    config.logger.warn('ApiKeyTouchFailed', `Writing the last use of API key ${opened.key.id} failed: ${describeError(error)}.`)
  })
}

function toAuth({ key, user }: OpenedKey): ApiKeyAuth {
  return {
    type: 'apiKey',
    id: key.id,
    name: key.name,
    scopes: [...key.scopes],
    owner: { ...key.owner },
    user: { id: user.id, name: user.name ?? null, email: user.email ?? null, image: user.image ?? null },
    expires: key.expiresAt?.toISOString() ?? NO_EXPIRY,
    metadata: key.metadata,
  }
}

function refused(error: 'invalid_request' | 'invalid_token', description: string): CredentialRead {
  return { auth: null, refusal: { error, description } }
}

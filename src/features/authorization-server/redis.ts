/**
 * `authorizationServer.store: { redis }`: the authorization server's records in Redis through
 * ioredis, shared by every process, each expiring with Redis's own TTL (no prune needed).
 *
 * Keys, under `keyPrefix` (default `portcullis:oauth`):
 * - `…:r:<model>:<id>`: a hash per record: `p` the payload as JSON, `c` when it was consumed (ms);
 * - `…:g:<grantId>`: the set of the record keys issued under a grant;
 * - `…:a:<accountId>`: the set of a user's record keys;
 * - `…:uid:<model>:<uid>`, `…:uc:<model>:<userCode>`: the record key a session's uid or a device
 *   flow's user code names.
 * An index key lives as long as the longest-lived record it names; a member whose record has gone is
 * dropped when it is next read. Every change of several keys is one script (atomic): a consume is
 * won by one caller, a grant or a user's records go at once. Redis 6.2 or later.
 */
import type { AdapterOAuthRecord, OAuthRecordRedis, OAuthRecordStore } from './types.js'

// KEYS: record, grant set, account set, uid key, user code key ('' for none).
// ARGV: payload JSON, expiry (ms since the epoch, '' for none), now (ms).
const UPSERT = `
local at = ARGV[2]
redis.call('HSET', KEYS[1], 'p', ARGV[1])
if at == '' then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIREAT', KEYS[1], at) end
for i = 2, 5 do
  local key = KEYS[i]
  if key ~= '' then
    local existed = redis.call('EXISTS', key) == 1
    local ttl = redis.call('PTTL', key)
    if i <= 3 then redis.call('SADD', key, KEYS[1]) else redis.call('SET', key, KEYS[1], 'KEEPTTL') end
    if at == '' then redis.call('PERSIST', key)
    elseif not existed or (ttl >= 0 and tonumber(ARGV[3]) + ttl < tonumber(at)) then redis.call('PEXPIREAT', key, at) end
  end
end
return 1`

// KEYS: record. ARGV: now (ms). 1 when this call consumed it.
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'c') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'c', ARGV[1])
return 1`

// KEYS: an index string key. The record it names, as [p, c], or nil.
const FIND_BY = `
local record = redis.call('GET', KEYS[1])
if not record then return nil end
return redis.call('HMGET', record, 'p', 'c')`

// KEYS: a set of record keys, then keys to delete with it. The number of records deleted.
const DELETE_SET = `
local deleted = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do deleted = deleted + redis.call('DEL', member) end
redis.call('DEL', KEYS[1])
for i = 2, #KEYS do deleted = deleted + redis.call('DEL', KEYS[i]) end
return deleted`

// KEYS: the account set. ARGV: the record key prefix of the model. [key, payload, pttl] of each record left.
const LIST = `
local found = {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local payload = redis.call('HGET', member, 'p')
  if not payload then redis.call('SREM', KEYS[1], member)
  elseif string.sub(member, 1, #ARGV[1]) == ARGV[1] then
    table.insert(found, member); table.insert(found, payload); table.insert(found, redis.call('PTTL', member))
  end
end
return found`

/** A found record from the hash's `[p, c]`. */
function toFound(fields: unknown): { payload: Record<string, unknown>; consumedAt: Date | null } | null {
  const [payload, consumed] = (Array.isArray(fields) ? fields : []) as [string | null, string | null]
  if (typeof payload !== 'string') return null
  return { payload: JSON.parse(payload) as Record<string, unknown>, consumedAt: consumed ? new Date(Number(consumed)) : null }
}

/** The payload's string field, for an index key. */
function field(payload: Record<string, unknown>, name: string): string | undefined {
  const value = payload[name]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/** The records on `client` under `prefix`. */
export function redisRecords(client: OAuthRecordRedis, prefix: string): OAuthRecordStore {
  const record = (model: string, id: string) => `${prefix}:r:${model}:${id}`
  const grantSet = (grantId: string) => `${prefix}:g:${grantId}`
  const accountSet = (accountId: string) => `${prefix}:a:${accountId}`
  return Object.freeze({
    async upsertOAuthRecord({ model, id, payload, expiresAt }: AdapterOAuthRecord) {
      const grantId = field(payload, 'grantId')
      const accountId = field(payload, 'accountId')
      const uid = field(payload, 'uid')
      const userCode = field(payload, 'userCode')
      const keys = [record(model, id), grantId ? grantSet(grantId) : '', accountId ? accountSet(accountId) : '', uid ? `${prefix}:uid:${model}:${uid}` : '', userCode ? `${prefix}:uc:${model}:${userCode}` : '']
      await client.eval(UPSERT, 5, ...keys, JSON.stringify(payload), expiresAt ? expiresAt.getTime() : '', Date.now())
    },
    async findOAuthRecord(model: string, id: string) {
      return toFound(await client.eval("return redis.call('HMGET', KEYS[1], 'p', 'c')", 1, record(model, id)))
    },
    async findOAuthRecordBy(model: string, by: 'uid' | 'userCode', value: string) {
      return toFound(await client.eval(FIND_BY, 1, `${prefix}:${by === 'uid' ? 'uid' : 'uc'}:${model}:${value}`))
    },
    async consumeOAuthRecord(model: string, id: string, at: Date) {
      return Number(await client.eval(CONSUME, 1, record(model, id), at.getTime())) === 1
    },
    async deleteOAuthRecord(model: string, id: string) {
      await client.eval("return redis.call('DEL', KEYS[1])", 1, record(model, id))
    },
    async deleteOAuthGrant(grantId: string) {
      await client.eval(DELETE_SET, 2, grantSet(grantId), record('Grant', grantId))
    },
    async listOAuthRecords(accountId: string, model: string) {
      const found = (await client.eval(LIST, 1, accountSet(accountId), `${prefix}:r:${model}:`)) as Array<string | number>
      const records: AdapterOAuthRecord[] = []
      const now = Date.now()
      for (let i = 0; i < found.length; i += 3) {
        const ttl = Number(found[i + 2])
        records.push({ model, id: String(found[i]).slice(`${prefix}:r:${model}:`.length), payload: JSON.parse(String(found[i + 1])) as Record<string, unknown>, expiresAt: ttl >= 0 ? new Date(now + ttl) : null })
      }
      return records
    },
    async deleteOAuthAccount(accountId: string) {
      return Number(await client.eval(DELETE_SET, 1, accountSet(accountId)))
    },
  })
}

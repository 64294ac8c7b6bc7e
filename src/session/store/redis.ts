/**
 * `session.store: { redis }`: the store in Redis through ioredis, shared by every process.
 *
 * Keys, under `keyPrefix` (default `portcullis:session`):
 * - `…:s:<id>`: a hash per session (userId, createdAt, lastSeenAt, ip, ua), expiring with it;
 * - `…:u:<userId>`: the set of the user's session ids (pruned as they are listed);
 * - `…:va:<userId>`: the user's "valid after" time;
 * - `…:k:<key>`: leases and remembered refresh answers;
 * - `…:changes`: a stream of the sessions ended and users cut off, trimmed to `CHANGES_RETENTION_MS`
 *   (written in the same script as the change it records, so no poll sees one without the other).
 * Every read or change of several keys is one round trip (a Lua script run atomically). Redis 6.2
 * or later (exclusive stream ranges, MINID trimming).
 */
import { CHANGES_RETENTION_MS, type SessionSelection, type SessionStore, type StoredSession } from './types.js'

/** The ioredis methods the store uses. */
export interface SessionRedis {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  set(...args: Array<string | number>): Promise<unknown>
  get(key: string): Promise<string | null>
  del(...keys: string[]): Promise<number>
}

// KEYS[1] session hash, KEYS[2] user set, KEYS[3] valid-after key; ARGV: fields…, ttl ms, the token's
// iat ('' for none). One script: a sign-out everywhere cannot fall between the check and the write.
const CREATE = `
if ARGV[9] ~= '' then
  local after = redis.call('GET', KEYS[3])
  if after and tonumber(after) > tonumber(ARGV[9]) then return 0 end
end
redis.call('HSET', KEYS[1], 'userId', ARGV[1], 'createdAt', ARGV[2], 'lastSeenAt', ARGV[3], 'ip', ARGV[4], 'ua', ARGV[5], 'expires', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SADD', KEYS[2], ARGV[7])
local ttl = redis.call('PTTL', KEYS[2])
if ttl < tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
return 1`

// KEYS[1] session hash, KEYS[2] user set; ARGV: userId, lastSeenAt, ttl ms, expires. Never brings back an ended session.
const TOUCH = `
if redis.call('HGET', KEYS[1], 'userId') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'lastSeenAt', ARGV[2], 'expires', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local ttl = redis.call('PTTL', KEYS[2])
if ttl < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1`

// KEYS: per asked session its hash key ('' when it has none) and its user's valid-after key.
// Returns, per asked session, the hash's fields (or false) and the valid-after value (or false).
const STATES = `
local out = {}
for i = 1, #KEYS, 2 do
  if KEYS[i] == '' then out[i] = false else out[i] = redis.call('HGETALL', KEYS[i]) end
  out[i + 1] = redis.call('GET', KEYS[i + 1])
end
return out`

// KEYS[1] user set; ARGV[1] the session key prefix. Returns id, fields per live session.
const LIST = `
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local key = ARGV[1] .. id
  local fields = redis.call('HGETALL', key)
  if #fields == 0 then
    redis.call('SREM', KEYS[1], id)
  else
    table.insert(out, id)
    table.insert(out, fields)
  end
end
return out`

// Appends a change to the stream KEYS[2] and trims what is older than ARGV[1] ms (by Redis's clock).
const RECORD = `
local function record(kind, id)
  local now = redis.call('TIME')
  local oldest = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[1])
  redis.call('XADD', KEYS[2], 'MINID', '~', string.format('%.0f', oldest), '*', kind, id)
end
`

// KEYS[1] user set, KEYS[2] changes; ARGV[2] the session key prefix, ARGV[3] mode (only|except|all), ARGV[4] the id.
const DELETE = `${RECORD}
local deleted = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local pick = (ARGV[3] == 'all') or (ARGV[3] == 'only' and id == ARGV[4]) or (ARGV[3] == 'except' and id ~= ARGV[4])
  if pick then
    redis.call('SREM', KEYS[1], id)
    if redis.call('DEL', ARGV[2] .. id) == 1 then
      table.insert(deleted, id)
      record('s', id)
    end
  end
end
return deleted`

// KEYS[1] valid-after key, KEYS[2] changes; ARGV[2] the time, ARGV[3] ttl ms, ARGV[4] the user.
const VALID_AFTER = `${RECORD}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
record('u', ARGV[4])
return 1`

// KEYS[1] changes; ARGV[1] the cursor ('' for none). Returns the next cursor and the entries after it.
const CHANGES = `
if ARGV[1] == '' then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #last == 0 then return {'0-0', {}} end
  return {last[1][1], {}}
end
local entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')
if #entries == 0 then return {ARGV[1], {}} end
return {entries[#entries][1], entries}`

export function redisStore(client: SessionRedis, prefix: string): SessionStore {
  const sessionKey = (id: string) => `${prefix}:s:${id}`
  const userKey = (userId: string) => `${prefix}:u:${userId}`
  const validAfterKey = (userId: string) => `${prefix}:va:${userId}`
  const valueKey = (key: string) => `${prefix}:k:${key}`
  const changesKey = `${prefix}:changes`

  return {
    label: 'Redis',
    async createSession(session, tokenIssuedAt) {
      const ttl = Math.max(1, session.expires - Date.now())
      const { id, userId, createdAt, lastSeenAt, ipAddress, userAgent } = session
      const keys = [sessionKey(id), userKey(userId), validAfterKey(userId)]
      const issued = tokenIssuedAt === undefined ? '' : String(tokenIssuedAt)
      return (await client.eval(CREATE, 3, ...keys, userId, createdAt, lastSeenAt, ipAddress ?? '', userAgent ?? '', ttl, id, session.expires, issued)) === 1
    },
    async touchSession(id, userId, lastSeenAt, expires) {
      return (await client.eval(TOUCH, 2, sessionKey(id), userKey(userId), userId, lastSeenAt, Math.max(1, expires - Date.now()), expires)) === 1
    },
    async sessionStates(asked) {
      const keys = asked.flatMap(({ id, userId }) => [id === undefined ? '' : sessionKey(id), validAfterKey(userId)])
      const answers = (await client.eval(STATES, keys.length, ...keys)) as Array<string[] | string | false | null>
      return asked.map(({ id, userId }, i) => {
        const pairs = answers[2 * i] as string[] | false | null
        const fields: Record<string, string> = {}
        if (Array.isArray(pairs)) for (let j = 0; j < pairs.length; j += 2) fields[pairs[j]!] = pairs[j + 1]!
        const session = id !== undefined && fields.userId === userId ? fromHash(id, fields) : null
        return { session, validAfter: Number(answers[2 * i + 1] || 0) || 0 }
      })
    },
    async listSessions(userId, now) {
      const rows = (await client.eval(LIST, 1, userKey(userId), sessionKey(''))) as Array<string | string[]>
      const sessions: StoredSession[] = []
      for (let i = 0; i < rows.length; i += 2) {
        const fields: Record<string, string> = {}
        const pairs = rows[i + 1] as string[]
        for (let j = 0; j < pairs.length; j += 2) fields[pairs[j]!] = pairs[j + 1]!
        const session = fromHash(rows[i] as string, fields)
        if (session && session.userId === userId && session.expires > now) sessions.push(session)
      }
      return sessions
    },
    async deleteSessions(userId, which: SessionSelection) {
      const [mode, id] = 'only' in which ? ['only', which.only] : which.except === undefined ? ['all', ''] : ['except', which.except]
      return (await client.eval(DELETE, 2, userKey(userId), changesKey, CHANGES_RETENTION_MS, sessionKey(''), mode, id)) as string[]
    },
    async setValidAfter(userId, at, ttlMs) {
      await client.eval(VALID_AFTER, 2, validAfterKey(userId), changesKey, CHANGES_RETENTION_MS, String(at), Math.max(1, Math.ceil(ttlMs)), userId)
    },
    async changesSince(cursor) {
      const [next, entries] = (await client.eval(CHANGES, 1, changesKey, cursor ?? '')) as [string, Array<[string, string[]]>]
      const sessionIds: string[] = []
      const userIds: string[] = []
      for (const [, fields] of entries) (fields[0] === 's' ? sessionIds : userIds).push(fields[1]!)
      return { cursor: next, sessionIds, userIds }
    },
    async claim(key, value, ttlMs) {
      return (await client.set(valueKey(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK'
    },
    get: (key) => client.get(valueKey(key)),
    async put(key, value, ttlMs) {
      await client.set(valueKey(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)))
    },
    async remove(key) {
      await client.del(valueKey(key))
    },
  }
}

/** A session hash as stored. */
function fromHash(id: string, fields: Record<string, string>): StoredSession | null {
  if (!fields.userId) return null
  return {
    id,
    userId: fields.userId,
    createdAt: Number(fields.createdAt),
    lastSeenAt: Number(fields.lastSeenAt),
    expires: Number(fields.expires),
    ipAddress: fields.ip || null,
    userAgent: fields.ua || null,
  }
}

/**
 * `session.store: { redis }`: the store in Redis through ioredis, shared by every process.
 *
 * Keys, under `keyPrefix` (default `portcullis:session`):
 * - `…:s:<id>`: a hash per session (userId, createdAt, lastSeenAt, ip, ua), expiring with it;
 * - `…:u:<userId>`: the set of the user's session ids (pruned as they are listed);
 * - `…:va:<userId>`: the user's "valid after" time;
 * - `…:k:<key>`: leases and remembered refresh answers.
 * Every read or change of several keys is one round trip (MGET, or a Lua script run atomically).
 */
import type { SessionSelection, SessionStore, StoredSession } from './types.js'

/** The ioredis methods the store uses. */
export interface SessionRedis {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  set(...args: Array<string | number>): Promise<unknown>
  get(key: string): Promise<string | null>
  del(...keys: string[]): Promise<number>
}

// KEYS[1] session hash, KEYS[2] user set; ARGV: fields…, ttl ms.
const CREATE = `
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

// KEYS[1] user set; ARGV[1] the session key prefix, ARGV[2] mode (only|except|all), ARGV[3] the id.
const DELETE = `
local deleted = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local pick = (ARGV[2] == 'all') or (ARGV[2] == 'only' and id == ARGV[3]) or (ARGV[2] == 'except' and id ~= ARGV[3])
  if pick then
    redis.call('SREM', KEYS[1], id)
    if redis.call('DEL', ARGV[1] .. id) == 1 then table.insert(deleted, id) end
  end
end
return deleted`

export function redisStore(client: SessionRedis, prefix: string): SessionStore {
  const sessionKey = (id: string) => `${prefix}:s:${id}`
  const userKey = (userId: string) => `${prefix}:u:${userId}`
  const validAfterKey = (userId: string) => `${prefix}:va:${userId}`
  const valueKey = (key: string) => `${prefix}:k:${key}`

  return {
    label: 'Redis',
    async createSession(session) {
      const ttl = Math.max(1, session.expires - Date.now())
      const { id, userId, createdAt, lastSeenAt, ipAddress, userAgent } = session
      await client.eval(CREATE, 2, sessionKey(id), userKey(userId), userId, createdAt, lastSeenAt, ipAddress ?? '', userAgent ?? '', ttl, id, session.expires)
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
      return (await client.eval(DELETE, 1, userKey(userId), sessionKey(''), mode, id)) as string[]
    },
    async setValidAfter(userId, at, ttlMs) {
      await client.set(validAfterKey(userId), String(at), 'PX', Math.max(1, Math.ceil(ttlMs)))
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

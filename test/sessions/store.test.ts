/**
 * The session stores themselves (src/session/store/), each method on its own, as init builds them
 * (`resolveSessionStore`, so through the guard that logs and wraps failures): memory, a Knex table on
 * SQLite, PostgreSQL and MariaDB, and Redis. The flows (contract.ts, revocation.test.ts, the shared
 * refresh) show what a user sees; here, what each store promises the code that calls it: exact
 * records, one user never reaching another's sessions, expiry, the changes a poll is given, leases.
 * Then what only one store does (the Knex table's creation and sweep), the option's errors, and the
 * store the refresh lease is shared through.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import knex, { type Knex } from 'knex'
import { AdapterError, InvalidConfigurationError } from '../../src/errors.js'
import { ensureStoreTable } from '../../src/session/store/knex.js'
import { resolveSessionStore, sharedStoreOf } from '../../src/session/store/resolve.js'
import { CHANGES_RETENTION_MS, type SessionStore, type StoredSession } from '../../src/session/store/types.js'
import type { SessionStoreOption } from '../../src/types.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { describeWithRedis } from '../support/redis.js'

const HOUR = 3600_000
// What must last is given an hour, what must end SHORT: a test that read a value within its 300 ms failed
// when the machine was loaded (in CI, PostgreSQL took longer than that between a put and the get after it).
const SHORT = 50
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const unique = (label: string) => `${label}-${randomBytes(6).toString('base64url')}`

/** The error lines a store's guard logged, each as its code and message parts. */
const errorsOf = (logger: RecordingLogger) => logger.lines.filter((line) => line.level === 'error').map((line) => [line.code, ...line.message])

/** Enough of an ioredis client for the option's checks. */
const IOREDIS_LIKE = { eval: () => {}, hgetall: () => {}, set: () => {}, get: () => {}, del: () => {} }

/** `knex` whose schema builder's `method` fails once with `message`, as a database refusing it would. */
function failingOnce(knex: Knex, method: 'hasTable' | 'createTable', message: string): Knex {
  let failures = 1
  return new Proxy(knex, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (property !== 'schema') return value
      return new Proxy(value as Knex.SchemaBuilder, {
        get(schema, name) {
          if (name === method && failures > 0) {
            failures -= 1
            return () => Promise.reject(new Error(message))
          }
          const member = Reflect.get(schema, name) as unknown
          return typeof member === 'function' ? member.bind(schema) : member
        },
      })
    },
    apply(target, self, args) {
      return Reflect.apply(target, self, args)
    },
  })
}

function session(userId: string, overrides: Partial<StoredSession> = {}): StoredSession {
  const now = Date.now()
  return { id: unique('sid'), userId, createdAt: now - 5000, lastSeenAt: now - 1000, expires: now + HOUR, ipAddress: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', ...overrides }
}

const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)

/** Runs `body` with `Date.now()` standing still at `start` until `setNow` moves it. */
async function onClock(body: (start: number, setNow: (ms: number) => void) => Promise<void>): Promise<void> {
  const realNow = Date.now
  const start = realNow()
  let now = start
  Date.now = () => now
  try {
    await body(start, (ms) => {
      now = ms
    })
  } finally {
    Date.now = realNow
  }
}

/** The names of a table's indexes, as the database lists them. */
async function indexesOf(db: Knex, kind: 'sqlite' | 'postgres' | 'mariadb', table: string): Promise<string[]> {
  if (kind === 'sqlite') return (await db('sqlite_master').where({ type: 'index', tbl_name: table }).pluck('name')) as string[]
  if (kind === 'postgres') return (await db('pg_indexes').where({ tablename: table }).pluck('indexname')) as string[]
  return (await db('information_schema.statistics').where({ table_name: table }).andWhereRaw('table_schema = database()').pluck('index_name')) as string[]
}

/**
 * What every store promises. `overlap`: the Knex store's polls re-read the last 5 s (a change may be
 * given twice), the others give each change once.
 */
function storeContract(label: string, make: () => SessionStore, { overlap }: { overlap: boolean }): void {
  let store: SessionStore
  beforeAll(() => {
    store = make()
  })

  it(`${label}: gives back a session exactly as stored, only to its own user, in the order asked`, async () => {
    const ada = unique('ada')
    const grace = unique('grace')
    const first = session(ada)
    const bare = session(ada, { ipAddress: null, userAgent: null })
    await store.createSession(first)
    await store.createSession(bare)
    const states = await store.sessionStates([
      { id: bare.id, userId: ada },
      { id: first.id, userId: grace },
      { id: undefined, userId: ada },
      { id: first.id, userId: ada },
      { id: unique('unknown'), userId: ada },
    ])
    expect(states).toEqual([
      { session: bare, validAfter: 0 },
      { session: null, validAfter: 0 },
      { session: null, validAfter: 0 },
      { session: first, validAfter: 0 },
      { session: null, validAfter: 0 },
    ])
    expect((await store.listSessions(ada, Date.now())).sort(byId)).toEqual([first, bare].sort(byId))
    expect(await store.listSessions(grace, Date.now())).toEqual([])
  })

  it(`${label}: an expired session is neither given nor listed, and is not brought back by a touch`, async () => {
    const ada = unique('ada')
    const expired = session(ada, { expires: Date.now() - 1 })
    const later = session(ada, { expires: Date.now() + 2 * HOUR })
    await store.createSession(expired)
    await store.createSession(later)
    await sleep(20)
    expect(await store.sessionStates([{ id: expired.id, userId: ada }])).toEqual([{ session: null, validAfter: 0 }])
    expect(await store.listSessions(ada, Date.now())).toEqual([later])
    expect(await store.touchSession(expired.id, ada, Date.now(), Date.now() + HOUR)).toBe(false)
    expect(await store.sessionStates([{ id: expired.id, userId: ada }])).toEqual([{ session: null, validAfter: 0 }])
    // Listed as of the time given: in an hour and a half the later session is still on; at its expiry, none.
    expect(await store.listSessions(ada, Date.now() + 1.5 * HOUR)).toEqual([later])
    expect(await store.listSessions(ada, later.expires)).toEqual([])
  })

  it(`${label}: a touch moves last-seen and expiry of the user's own session only`, async () => {
    const ada = unique('ada')
    const stored = session(ada)
    await store.createSession(stored)
    const seen = Date.now()
    const expires = seen + 5 * HOUR
    expect(await store.touchSession(stored.id, unique('mallory'), seen, expires)).toBe(false)
    expect(await store.sessionStates([{ id: stored.id, userId: ada }])).toEqual([{ session: stored, validAfter: 0 }])
    expect(await store.touchSession(stored.id, ada, seen, expires)).toBe(true)
    expect(await store.sessionStates([{ id: stored.id, userId: ada }])).toEqual([{ session: { ...stored, lastSeenAt: seen, expires }, validAfter: 0 }])
    expect(await store.touchSession(unique('missing'), ada, seen, expires)).toBe(false)
    expect(await store.listSessions(ada, Date.now())).toEqual([{ ...stored, lastSeenAt: seen, expires }])
  })

  it(`${label}: deletes one, all but one, or all of a user's sessions, never another user's, and a poll is given the ids`, async () => {
    const ada = unique('ada')
    const grace = unique('grace')
    const [laptop, phone, tablet, desktop] = [session(ada), session(ada), session(ada), session(ada)]
    const graces = session(grace)
    for (const each of [laptop!, phone!, tablet!, desktop!, graces]) await store.createSession(each)
    const { cursor } = await store.changesSince(undefined)

    expect(await store.deleteSessions(ada, { only: graces.id })).toEqual([])
    expect(await store.deleteSessions(grace, { only: laptop!.id })).toEqual([])
    expect(await store.deleteSessions(ada, { only: phone!.id })).toEqual([phone!.id])
    expect((await store.listSessions(ada, Date.now())).map((each) => each.id).sort()).toEqual([laptop!.id, tablet!.id, desktop!.id].sort())
    expect((await store.deleteSessions(ada, { except: laptop!.id })).sort()).toEqual([tablet!.id, desktop!.id].sort())
    expect(await store.listSessions(ada, Date.now())).toEqual([laptop])
    expect(await store.deleteSessions(ada, {})).toEqual([laptop!.id])
    expect(await store.listSessions(ada, Date.now())).toEqual([])
    expect(await store.deleteSessions(ada, {})).toEqual([])
    expect(await store.listSessions(grace, Date.now())).toEqual([graces])
    expect(await store.sessionStates([{ id: laptop!.id, userId: ada }, { id: graces.id, userId: grace }])).toEqual([
      { session: null, validAfter: 0 },
      { session: graces, validAfter: 0 },
    ])

    const changes = await store.changesSince(cursor)
    expect([...changes.sessionIds].sort()).toEqual([phone!.id, tablet!.id, desktop!.id, laptop!.id].sort())
    expect(changes.userIds).toEqual([])
    expect(typeof changes.cursor).toBe('string')
  })

  it(`${label}: a "valid after" time is given with every state of the user until it expires, and a poll is given the user`, async () => {
    const ada = unique('ada')
    const grace = unique('grace')
    const stored = session(ada)
    await store.createSession(stored)
    const { cursor } = await store.changesSince(undefined)
    const at = Date.now() - 1234
    await store.setValidAfter(ada, at, HOUR)
    expect(await store.sessionStates([{ id: stored.id, userId: ada }, { id: undefined, userId: ada }, { id: undefined, userId: grace }])).toEqual([
      { session: stored, validAfter: at },
      { session: null, validAfter: at },
      { session: null, validAfter: 0 },
    ])
    const changes = await store.changesSince(cursor)
    expect(changes.userIds).toEqual([ada])
    // (The Knex store's poll also re-reads the earlier tests' changes of the last 5 s.)
    if (overlap) expect(changes.sessionIds).not.toContain(stored.id)
    else expect(changes.sessionIds).toEqual([])
    // Set again for a short time: that time replaces the hour, and then the time is given no more.
    await store.setValidAfter(ada, at, SHORT)
    await sleep(SHORT + 100)
    expect(await store.sessionStates([{ id: undefined, userId: ada }])).toEqual([{ session: null, validAfter: 0 }])
  })

  it(`${label}: a token without session id is given a record only when the user's "valid after" time is not later than its issue time`, async () => {
    const ada = unique('ada')
    const grace = unique('grace')
    const at = Date.now() - 1234
    await store.setValidAfter(ada, at, HOUR)
    const older = session(ada)
    const ofThatTime = session(ada)
    const newer = session(ada)
    expect(await store.createSession(older, at - 1)).toBe(false)
    expect(await store.createSession(ofThatTime, at)).toBe(true)
    expect(await store.createSession(newer, at + 1000)).toBe(true)
    // Another user's time does not count, and a sign-in (no issue time to check) is never refused.
    const gracesOld = session(grace)
    const signIn = session(ada)
    expect(await store.createSession(gracesOld, at - 1)).toBe(true)
    expect(await store.createSession(signIn)).toBe(true)
    // The refused one left nothing behind.
    expect((await store.listSessions(ada, Date.now())).map((stored) => stored.id).sort()).toEqual([ofThatTime.id, newer.id, signIn.id].sort())
    expect(await store.sessionStates([{ id: older.id, userId: ada }])).toEqual([{ session: null, validAfter: at }])
  })

  it(`${label}: a first poll is given nothing, only where the next starts; each later change is given to the poll after it`, async () => {
    const ada = unique('ada')
    const before = session(ada)
    await store.createSession(before)
    await store.deleteSessions(ada, { only: before.id })
    const first = await store.changesSince(undefined)
    expect(first).toEqual({ cursor: expect.any(String), sessionIds: [], userIds: [] })

    const after = session(ada)
    await store.createSession(after)
    await store.deleteSessions(ada, {})
    const second = await store.changesSince(first.cursor)
    expect(second.sessionIds).toContain(after.id)
    if (!overlap) expect(second.sessionIds).not.toContain(before.id)
    expect(second.cursor).not.toBe('')

    const bob = unique('bob')
    await store.setValidAfter(bob, Date.now(), HOUR)
    const third = await store.changesSince(second.cursor)
    expect(third.userIds).toContain(bob)
    if (overlap) {
      // Re-read on purpose (a change committed late is not missed), never lost.
      expect(third.sessionIds).toContain(after.id)
    } else {
      expect(third).toEqual({ cursor: expect.any(String), sessionIds: [], userIds: [bob] })
      expect(await store.changesSince(third.cursor)).toEqual({ cursor: third.cursor, sessionIds: [], userIds: [] })
    }
  })

  it(`${label}: a lease is claimed once while it lasts, then again; get, put and remove keep a value for its time`, async () => {
    const key = unique('lease')
    expect(await store.get(key)).toBeNull()
    expect(await store.claim(key, 'first', HOUR)).toBe(true)
    expect(await store.claim(key, 'second', HOUR)).toBe(false)
    expect(await store.get(key)).toBe('first')
    await store.remove(key)
    expect(await store.get(key)).toBeNull()
    expect(await store.claim(key, 'third', SHORT)).toBe(true)
    await sleep(SHORT + 100)
    expect(await store.get(key)).toBeNull()
    expect(await store.claim(key, 'fourth', HOUR)).toBe(true)
    expect(await store.get(key)).toBe('fourth')

    const answer = unique('answer')
    await store.put(answer, '{"access_token":"a"}', HOUR)
    expect(await store.get(answer)).toBe('{"access_token":"a"}')
    await store.put(answer, '{"access_token":"b"}', HOUR)
    expect(await store.get(answer)).toBe('{"access_token":"b"}')
    expect(await store.claim(answer, 'lease', HOUR)).toBe(false)
    // A put's time replaces the one before: a short one now ends the value.
    await store.put(answer, '{"access_token":"c"}', SHORT)
    await sleep(SHORT + 100)
    expect(await store.get(answer)).toBeNull()
    // A key and a session id of the same text are different things.
    expect(await store.get(key.replace('lease', 'sid'))).toBeNull()
    // Removing one key leaves the others.
    const kept = unique('kept')
    await store.put(kept, 'stays', HOUR)
    await store.remove(unique('other'))
    await store.remove(key)
    expect(await store.get(kept)).toBe('stays')
  })

  it(`${label}: ten processes claiming one lease at once: exactly one gets it`, async () => {
    const key = unique('race')
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claim(key, `claimer-${i}`, HOUR)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await store.get(key)).toBe(`claimer-${results.indexOf(true)}`)
  })

  it(`${label}: ids and keys differing only in case are different sessions and leases`, async () => {
    const ada = unique('ada')
    const upper = session(ada, { id: 'Session-AbC' + unique('') })
    const lower = session(ada, { id: upper.id.toLowerCase() })
    await store.createSession(upper)
    await store.createSession(lower)
    expect((await store.listSessions(ada, Date.now())).sort(byId)).toEqual([upper, lower].sort(byId))
    expect(await store.deleteSessions(ada, { only: upper.id })).toEqual([upper.id])
    expect(await store.listSessions(ada, Date.now())).toEqual([lower])
    const key = unique('Lease')
    expect(await store.claim(key, 'upper', HOUR)).toBe(true)
    expect(await store.claim(key.toLowerCase(), 'lower', HOUR)).toBe(true)
    expect(await store.get(key)).toBe('upper')
  })
}

describe('memory store', () => {
  storeContract('memory', () => resolveSessionStore('memory', recordingLogger())!, { overlap: false })

  it('keeps changes for the retention time only (ten minutes)', () =>
    onClock(async (start, setNow) => {
      const store = resolveSessionStore('memory', recordingLogger())!
      const ada = unique('ada')
      const { cursor } = await store.changesSince(undefined)
      await store.setValidAfter(ada, start, HOUR)
      setNow(start + CHANGES_RETENTION_MS - 1)
      await store.setValidAfter('grace', Date.now(), HOUR)
      expect((await store.changesSince(cursor)).userIds).toEqual([ada, 'grace'])
      // A change recorded once the first is older than the retention drops it.
      setNow(start + CHANGES_RETENTION_MS)
      await store.setValidAfter('bob', Date.now(), HOUR)
      expect((await store.changesSince(cursor)).userIds).toEqual(['grace', 'bob'])
    }))

  it('ends a session, a "valid after" time and a value at the millisecond they expire', () =>
    onClock(async (start, setNow) => {
      const store = resolveSessionStore('memory', recordingLogger())!
      const ada = unique('ada')
      const stored = session(ada, { expires: start + 1000 })
      await store.createSession(stored)
      await store.setValidAfter(ada, start, 1000)
      await store.put('answer', 'v', 1000)
      setNow(start + 999)
      expect(await store.sessionStates([{ id: stored.id, userId: ada }])).toEqual([{ session: stored, validAfter: start }])
      expect(await store.get('answer')).toBe('v')
      setNow(start + 1000)
      expect(await store.sessionStates([{ id: stored.id, userId: ada }])).toEqual([{ session: null, validAfter: 0 }])
      expect(await store.get('answer')).toBeNull()
    }))
})

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `Knex store on ${kind}`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
    })
    afterAll(() => db?.destroy())

    storeContract(kind, () => resolveSessionStore({ knex: db.knex as never }, recordingLogger())!, { overlap: true })

    it(`${kind}: creates its table on first use under the name given, with the label of the database`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const store = resolveSessionStore({ knex: db.knex as never, tableName }, recordingLogger())!
      expect(store.label).toBe({ sqlite: 'SQLite', postgres: 'PostgreSQL', mariadb: 'MySQL' }[kind])
      expect(await db.knex.schema.hasTable(tableName)).toBe(false)
      expect(await store.get('anything')).toBeNull()
      expect(await db.knex.schema.hasTable(tableName)).toBe(true)
    })

    it(`${kind}: with createTable false, a missing table fails the call (logged once, an AdapterError) and the next call, once the table is there, works`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const logger = recordingLogger()
      const store = resolveSessionStore({ knex: db.knex as never, tableName, createTable: false }, logger)!
      const ada = unique('ada')
      const stored = session(ada)
      const failure = await store.createSession(stored).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(failure).toBeInstanceOf(AdapterError)
      expect((failure as AdapterError).method).toBe('session store createSession')
      expect((failure as AdapterError).message).toBe("The adapter's session store createSession() failed.")
      expect(await db.knex.schema.hasTable(tableName)).toBe(false)
      expect(errorsOf(logger)).toHaveLength(1)
      const label = store.label
      expect(errorsOf(logger)[0]!.slice(0, 2)).toEqual(['AdapterError', `The session store (${label}) failed in createSession():`])
      // What the database said, without the values of the call (the session's id, the user's address).
      const described = String(errorsOf(logger)[0]![2])
      expect(described).toContain(tableName)
      expect(described).not.toContain(stored.id)
      expect(described).not.toContain('203.0.113.7')
      expect(((failure as AdapterError).cause as Error).message).not.toContain(stored.id)

      await ensureStoreTable(db.knex, tableName)
      await store.createSession(stored)
      expect(await store.listSessions(ada, Date.now())).toEqual([stored])
      expect(errorsOf(logger)).toHaveLength(1)
    })

    it(`${kind}: a failed table creation is tried again on the next call`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const logger = recordingLogger()
      // The first look for the table fails (a connection dropped mid-query).
      const flaky = failingOnce(db.knex, 'hasTable', 'connection reset')
      const store = resolveSessionStore({ knex: flaky as never, tableName }, logger)!
      await expect(store.get('the-key')).rejects.toThrow(AdapterError)
      expect(errorsOf(logger)[0]![1]).toBe(`The session store (${store.label}) failed in get():`)
      expect(String(errorsOf(logger)[0]![2])).toBe('Error: connection reset')
      expect(await store.get('the-key')).toBeNull()
      expect(await db.knex.schema.hasTable(tableName)).toBe(true)
    })

    it(`${kind}: a table creation that failed is tried again, and its error is the one reported`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const logger = recordingLogger()
      // The database refuses the first CREATE TABLE (say, a missing privilege, granted since).
      const refusing = failingOnce(db.knex, 'createTable', 'permission denied for schema public')
      const store = resolveSessionStore({ knex: refusing as never, tableName }, logger)!
      await expect(store.put('the-key', 'v', HOUR)).rejects.toThrow(AdapterError)
      expect(String(errorsOf(logger)[0]![2])).toBe('Error: permission denied for schema public')
      expect(await db.knex.schema.hasTable(tableName)).toBe(false)
      await store.put('the-key', 'v', HOUR)
      expect(await store.get('the-key')).toBe('v')
      expect(errorsOf(logger)).toHaveLength(1)
    })

    it(`${kind}: an index of its table that cannot be created fails the call, rather than leaving the table without it`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      // Another table already holds the name of the store's user index (index names are per schema on
      // PostgreSQL and SQLite; per table on MySQL, where nothing clashes).
      await db.knex.schema.createTable(`${tableName}_other`, (table) => void table.string('userId').index(`${tableName}_user_index`))
      const logger = recordingLogger()
      const store = resolveSessionStore({ knex: db.knex as never, tableName }, logger)!
      if (kind === 'mariadb') {
        expect(await store.get('the-key')).toBeNull()
        return
      }
      await expect(store.get('the-key')).rejects.toThrow(AdapterError)
      // As the database said it (the SQL itself is not logged).
      expect(String(errorsOf(logger)[0]![2])).toMatch(new RegExp(`\\b${tableName}_user_index"? already exists$`))
    })

    it(`${kind}: a new table keeps ids and keys differing only in case apart`, async () => {
      // (The contract's store created its table in its first test; this one makes its own.)
      const store = resolveSessionStore({ knex: db.knex as never, tableName: `store_${randomBytes(4).toString('hex')}` }, recordingLogger())!
      const ada = unique('ada')
      const upper = session(ada, { id: `Session-AbC-${unique('x')}` })
      const lower = session(ada, { id: upper.id.toLowerCase() })
      await store.createSession(upper)
      await store.createSession(lower)
      expect((await store.listSessions(ada, Date.now())).sort(byId)).toEqual([upper, lower].sort(byId))
      expect(await store.claim('Lease', 'upper', HOUR)).toBe(true)
      expect(await store.claim('lease', 'lower', HOUR)).toBe(true)
      // Two users whose ids differ in case (ids are the adapter's, or a provider's): neither sees nor ends the other's.
      const mixed = `User-${unique('X')}`
      const theirs = session(mixed)
      const mine = session(mixed.toLowerCase())
      await store.createSession(theirs)
      await store.createSession(mine)
      expect(await store.listSessions(mine.userId, Date.now())).toEqual([mine])
      expect(await store.deleteSessions(mine.userId, {})).toEqual([mine.id])
      expect(await store.listSessions(mixed, Date.now())).toEqual([theirs])
    })

    it(`${kind}: a claim whose write fails for another reason than a taken key fails, rather than being refused`, async () => {
      // Refused, the caller would wait for a lease nobody holds. The key column holds 255 characters
      // (SQLite does not enforce it: there a NOT NULL expiry is what fails).
      const store = resolveSessionStore({ knex: db.knex as never }, recordingLogger())!
      const [key, ttl] = kind === 'sqlite' ? [unique('k'), Number.NaN] : ['k'.repeat(300), HOUR]
      await expect(store.claim(key, 'v', ttl)).rejects.toThrow(AdapterError)
      expect(await store.claim(unique('fine'), 'v', HOUR)).toBe(true)
    })

    it(`${kind}: a takeover whose delete of the lapsed lease keeps failing fails after its tries, rather than trying forever`, async () => {
      // The delete is tried up to three times (InnoDB may pick it as a deadlock victim); a trigger
      // refusing every delete makes each try fail.
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const logger = recordingLogger()
      const store = resolveSessionStore({ knex: db.knex as never, tableName }, logger)!
      expect(await store.claim('stuck', 'gone', 1)).toBe(true)
      await sleep(5)
      const refuse = `${tableName}_refuse_delete`
      if (kind === 'sqlite') await db.knex.raw(`CREATE TRIGGER ${refuse} BEFORE DELETE ON ${tableName} BEGIN SELECT RAISE(ABORT, 'deletes refused'); END`)
      if (kind === 'mariadb') await db.knex.raw(`CREATE TRIGGER ${refuse} BEFORE DELETE ON ${tableName} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'deletes refused'`)
      if (kind === 'postgres') {
        await db.knex.raw(`CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'deletes refused'; END $$`)
        await db.knex.raw(`CREATE TRIGGER ${refuse} BEFORE DELETE ON ${tableName} FOR EACH ROW EXECUTE FUNCTION ${refuse}()`)
      }
      await expect(store.claim('stuck', 'next', HOUR)).rejects.toThrow(AdapterError)
      expect(String(errorsOf(logger)[0]![2])).toMatch(/deletes refused/)
    })

    it(`${kind}: three processes creating the table at once all go on with it`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const others = [knex(db.config), knex(db.config)]
      try {
        await Promise.all([db.knex, ...others].map((each) => ensureStoreTable(each, tableName)))
        expect(await db.knex.schema.hasTable(tableName)).toBe(true)
        const stores = [db.knex, ...others].map((each) => resolveSessionStore({ knex: each as never, tableName }, recordingLogger())!)
        expect(await Promise.all(stores.map((store, i) => store.claim('k', String(i), HOUR)))).toEqual(expect.arrayContaining([true, false, false]))
      } finally {
        await Promise.all(others.map((each) => each.destroy()))
      }
    })

    it(`${kind}: two stores in one database, each in its own table (and indexes), keep apart`, async () => {
      // Names of one length: index names made of them must still differ.
      const [first, second] = [`store_${randomBytes(4).toString('hex')}`, `store_${randomBytes(4).toString('hex')}`]
      const one = resolveSessionStore({ knex: db.knex as never, tableName: first }, recordingLogger())!
      const other = resolveSessionStore({ knex: db.knex as never, tableName: second }, recordingLogger())!
      expect(await one.claim('lease', 'one', HOUR)).toBe(true)
      expect(await other.claim('lease', 'other', HOUR)).toBe(true)
      expect([await one.get('lease'), await other.get('lease')]).toEqual(['one', 'other'])
      // Each with the two indexes its reads and sweeps use (a failed index is not an error at creation).
      for (const table of [first, second]) expect((await indexesOf(db.knex, kind, table)).sort()).toEqual(expect.arrayContaining([`${table}_expires_index`, `${table}_user_index`]))
    })

    it(`${kind}: expired rows are swept, about once per 200 writes; the changes a poll may still need are kept`, async () => {
      const tableName = `store_${randomBytes(4).toString('hex')}`
      const store = resolveSessionStore({ knex: db.knex as never, tableName }, recordingLogger())!
      const { cursor } = await store.changesSince(undefined)
      const ada = unique('ada')
      await store.setValidAfter(ada, Date.now(), HOUR)
      await store.put('expired', 'old', 1)
      await sleep(5)
      const rows = () => db.knex(tableName).count<Array<{ n: number | string }>>({ n: '*' }).then(([row]) => Number(row!.n))
      // Writes so far: the "valid after" time and the put. The rows: those two and the change.
      for (let i = 1; i < 198; i++) await store.put(`live-${i}`, 'v', HOUR)
      expect(await rows()).toBe(200)
      expect(await db.knex(tableName).where({ key: 'k:expired' }).first('key')).toBeDefined()
      await store.put('live-198', 'v', HOUR)
      expect(await db.knex(tableName).where({ key: 'k:expired' }).first('key')).toBeUndefined()
      expect(await rows()).toBe(200)
      expect((await store.changesSince(cursor)).userIds).toEqual([ada])
    })

    it(`${kind}: a lease whose time ran out is taken over by exactly one of several claimers`, async () => {
      const store = resolveSessionStore({ knex: db.knex as never }, recordingLogger())!
      // Many times: the claimers interleave differently each time. On MariaDB InnoDB sometimes picked a
      // claimer's delete of the lapsed lease as a deadlock victim, which claim() threw until it tried that
      // delete again (2026-11-27: 2-9 rounds in 200 in a script of its own; in this test, 100 rounds failed
      // 2 runs of 8 before the fix, 0 of 8 after).
      for (let round = 0; round < 100; round++) {
        const key = unique('stale')
        expect(await store.claim(key, 'gone', 1)).toBe(true)
        await sleep(5)
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.claim(key, `next-${i}`, HOUR)))
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await store.get(key)).toBe(`next-${results.indexOf(true)}`)
      }
    })
  })
}

await describeWithRedis('Redis store', (server) => {
  afterAll(() => server.cleanUp())
  storeContract('Redis', () => resolveSessionStore({ redis: server.connect() as never, keyPrefix: server.uniqueKeyPrefix() }, recordingLogger())!, { overlap: false })
  storeContract('Redis through ioredis 5', () => resolveSessionStore({ redis: server.connectIoredis5() as never, keyPrefix: server.uniqueKeyPrefix() }, recordingLogger())!, { overlap: false })

  it('Redis: keeps every key under its prefix, and a session key expires with the session', async () => {
    const client = server.connect()
    const prefix = server.uniqueKeyPrefix()
    const store = resolveSessionStore({ redis: client as never, keyPrefix: prefix }, recordingLogger())!
    expect(store.label).toBe('Redis')
    const ada = unique('ada')
    const stored = session(ada, { expires: Date.now() + 60_000 })
    await store.createSession(stored)
    await store.put('answer', 'v', 30_000)
    await store.setValidAfter(ada, Date.now(), 30_000)
    await store.deleteSessions(ada, { only: unique('none') })
    const keys = (await client.keys(`${prefix}:*`)).sort()
    expect(keys).toEqual([`${prefix}:changes`, `${prefix}:k:answer`, `${prefix}:s:${stored.id}`, `${prefix}:u:${ada}`, `${prefix}:va:${ada}`].sort())
    expect(await client.pttl(`${prefix}:s:${stored.id}`)).toBeGreaterThan(55_000)
    expect(await client.pttl(`${prefix}:s:${stored.id}`)).toBeLessThanOrEqual(60_000)
    expect(await client.pttl(`${prefix}:k:answer`)).toBeGreaterThan(25_000)
    // A touch moves the key's expiry with the session's, and the user's set lives as long as its longest session.
    expect(await store.touchSession(stored.id, ada, Date.now(), Date.now() + 120_000)).toBe(true)
    expect(await client.pttl(`${prefix}:s:${stored.id}`)).toBeGreaterThan(115_000)
    expect(await client.pttl(`${prefix}:s:${stored.id}`)).toBeLessThanOrEqual(120_000)
    expect(await client.pttl(`${prefix}:u:${ada}`)).toBeGreaterThan(115_000)
    const shorter = session(ada, { expires: Date.now() + 10_000 })
    await store.createSession(shorter)
    expect(await client.pttl(`${prefix}:u:${ada}`)).toBeGreaterThan(115_000)
  })

  it('Redis: a failing server fails the call as an AdapterError, logged once with what Redis said', async () => {
    // Nothing listens on port 1; without an offline queue a command fails at once.
    const client = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null })
    client.on('error', () => {})
    try {
      const logger = recordingLogger()
      const store = resolveSessionStore({ redis: client as never }, logger)!
      await expect(store.listSessions('ada', Date.now())).rejects.toThrow("The adapter's session store listSessions() failed.")
      expect(errorsOf(logger)).toHaveLength(1)
      expect(errorsOf(logger)[0]!.slice(0, 2)).toEqual(['AdapterError', 'The session store (Redis) failed in listSessions():'])
    } finally {
      client.disconnect()
    }
  })
})

describe('session.store option', () => {
  const logger = recordingLogger()
  const refused = (option: unknown) => {
    try {
      resolveSessionStore(option as SessionStoreOption, logger)
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidConfigurationError)
      return (error as Error).message
    }
    return undefined
  }
  /** Enough of a Knex instance for the option's checks: callable, with raw and the client's name. */
  const knexLike = (client: unknown) => Object.assign(() => {}, { raw: () => {}, client: { config: { client } } })

  it('is none when not set, and the memory store for "memory"', () => {
    expect(resolveSessionStore(undefined, logger)).toBeUndefined()
    expect(resolveSessionStore('memory', logger)!.label).toBe('memory')
  })

  it('names the database of each Knex client it takes', () => {
    const labels = Object.fromEntries(['pg', 'postgres', 'postgresql', 'mysql', 'mysql2', 'sqlite3', 'better-sqlite3'].map((client) => [client, resolveSessionStore({ knex: knexLike(client) as never }, logger)!.label]))
    expect(labels).toEqual({ pg: 'PostgreSQL', postgres: 'PostgreSQL', postgresql: 'PostgreSQL', mysql: 'MySQL', mysql2: 'MySQL', sqlite3: 'SQLite', 'better-sqlite3': 'SQLite' })
  })

  it('refuses what it cannot use, saying what to pass', () => {
    const notKnex = 'session.store.knex must be a Knex instance, e.g. knex({ client: "pg", connection: process.env.DATABASE_URL }).'
    expect(refused({ knex: {} })).toBe(notKnex)
    expect(refused({ knex: Object.assign(() => {}, { client: { config: { client: 'pg' } } }) })).toBe(notKnex)
    expect(refused({ knex: { raw: () => {} } })).toBe(notKnex)
    const clients = '; the session store works with "pg", "mysql2" (MySQL, MariaDB), "better-sqlite3" and "sqlite3".'
    expect(refused({ knex: knexLike('oracledb') })).toBe(`session.store.knex uses the Knex client "oracledb"${clients}`)
    expect(refused({ knex: knexLike(undefined) })).toBe(`session.store.knex uses the Knex client undefined${clients}`)
    expect(refused({ knex: knexLike({ name: 'pg' }) })).toBe(`session.store.knex uses the Knex client {"name":"pg"}${clients}`)
    expect(refused({ knex: knexLike('toString') })).toBe(`session.store.knex uses the Knex client "toString"${clients}`)
    expect(refused({ knex: Object.assign(() => {}, { raw: () => {} }) })).toBe(`session.store.knex uses the Knex client undefined${clients}`)
    const table = 'session.store.tableName must be a plain table name (letters, digits, "_", at most 63 characters); got '
    for (const tableName of ['sessions; drop table users', '1sessions', '', 'a'.repeat(64), 42, 'sessions\n']) {
      expect(refused({ knex: knexLike('pg'), tableName })).toBe(`${table}${JSON.stringify(tableName)}.`)
    }
    // An array whose text would pass.
    expect(refused({ knex: knexLike('pg'), tableName: ['sessions'] })).toBe(`${table}["sessions"].`)
    expect(refused({ knex: knexLike('pg'), tableName: `_${'a'.repeat(62)}` })).toBeUndefined()
    expect(refused({ knex: knexLike('pg'), tableName: 'Z9' })).toBeUndefined()
    expect(refused({ knex: knexLike('pg'), createTable: 'no' })).toBe('session.store.createTable must be true or false.')
    expect(refused({ knex: knexLike('pg'), createTable: false })).toBeUndefined()
    const notRedis = 'session.store.redis must be an ioredis client, e.g. new Redis(process.env.REDIS_URL) from ioredis.'
    expect(refused({ redis: null })).toBe(notRedis)
    expect(refused({ redis: 'redis://localhost' })).toBe(notRedis)
    expect(refused({ redis: { eval: () => {} } })).toBe(notRedis)
    expect(refused({ redis: { hgetall: () => {} } })).toBe(notRedis)
    expect(refused({ redis: Object.assign(() => {}, { eval: () => {}, hgetall: () => {} }) })).toBe(notRedis)
    // node-redis (hGetAll, and an eval of another signature).
    expect(refused({ redis: { eval: () => {}, hGetAll: () => {} } })).toBe(notRedis)
    const prefix = 'session.store.keyPrefix must be a non-empty string of at most 100 characters.'
    expect(refused({ redis: IOREDIS_LIKE, keyPrefix: '' })).toBe(prefix)
    expect(refused({ redis: IOREDIS_LIKE, keyPrefix: 'k'.repeat(101) })).toBe(prefix)
    expect(refused({ redis: IOREDIS_LIKE, keyPrefix: 7 })).toBe(prefix)
    expect(refused({ redis: IOREDIS_LIKE, keyPrefix: 'k'.repeat(100) })).toBeUndefined()
    expect(refused({ redis: IOREDIS_LIKE })).toBeUndefined()
    const what = "session.store must be 'memory', { knex } or { redis }."
    for (const option of ['redis', null, 42, {}, { memory: true }]) expect(refused(option)).toBe(what)
  })
})

describe('the store the refresh lease is shared through', () => {
  const logger = recordingLogger()
  let sqlite: Knex
  beforeAll(() => {
    sqlite = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  })
  afterAll(() => sqlite.destroy())

  it('is the session store when it is shared, none when it is in memory', () => {
    const shared = resolveSessionStore({ knex: sqlite as never }, logger)!
    expect(sharedStoreOf(shared, 'memory', logger)).toBe(shared)
    expect(sharedStoreOf(shared, { redis: IOREDIS_LIKE as never }, logger)).toBe(shared)
    expect(sharedStoreOf(resolveSessionStore('memory', logger), { knex: sqlite as never }, logger)).toBeUndefined()
  })

  it('else the rate limit\'s store when it is a Knex instance or an ioredis client, else none', async () => {
    expect(sharedStoreOf(undefined, undefined, logger)).toBeUndefined()
    expect(sharedStoreOf(undefined, 'memory', logger)).toBeUndefined()
    expect(sharedStoreOf(undefined, null as never, logger)).toBeUndefined()
    expect(sharedStoreOf(undefined, 'redis' as never, logger)).toBeUndefined()
    const fromKnex = sharedStoreOf(undefined, { knex: sqlite as never }, logger)!
    expect(fromKnex.label).toBe('SQLite')
    expect(await fromKnex.claim('lease', 'mine', HOUR)).toBe(true)
    expect(await sqlite('portcullis_session_store').where({ key: 'k:lease' }).first('value')).toEqual({ value: 'mine' })
    expect(sharedStoreOf(undefined, { redis: IOREDIS_LIKE as never }, logger)!.label).toBe('Redis')
    // node-redis: the rate limit takes it, the session store does not.
    expect(sharedStoreOf(undefined, { redis: { eval: () => {}, hGetAll: () => {} } as never }, logger)).toBeUndefined()
    expect(sharedStoreOf(undefined, { redis: { hgetall: () => {} } as never }, logger)).toBeUndefined()
  })
})

/**
 * `session.store: { knex }`: the store in a table of the app's database (PostgreSQL, MySQL/MariaDB,
 * SQLite), shared by every process using it. The table (default `portcullis_session_store`) is
 * created on first use when missing, unless `createTable: false`.
 *
 * One row per key: `s:<id>` for a session (with its user and details), `va:<userId>` for a user's
 * "valid after" time, `k:<key>` for leases and remembered refresh answers, `e:<time>:<random>` for
 * a change (a session ended, a user cut off; under the user id `CHANGES_USER`, written in the same
 * transaction as the change). Every read is one query.
 */
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { createTableUnlessExists } from '../../adapters/knex/create-table.js'
import { CHANGES_RETENTION_MS, type SessionSelection, type SessionStore, type StoredSession } from './types.js'

type Row = Record<string, unknown>

/** Expired rows are deleted about once per this many writes (a range scan of the `expires` index). */
const SWEEP_EVERY = 200
/** The user id the change rows are kept under (its index finds them); no user's id starts with ':'. */
const CHANGES_USER = ':changes'
/**
 * How far back of its cursor a poll reads: a change is stamped with its writer's clock before its
 * transaction commits, so one committed late, or stamped by a clock running behind, is still seen
 * (given twice instead, which costs one more check of that session).
 */
const CHANGES_OVERLAP_MS = 5000

/** A change row: the session ended (`s:<id>`) or the user cut off (`u:<id>`). */
function changeRow(change: string): Row {
  const at = Date.now()
  return { key: `e:${at}:${randomBytes(6).toString('base64url')}`, userId: CHANGES_USER, createdAt: at, expires: at + CHANGES_RETENTION_MS, value: change }
}

/** `statement`, tried up to three times: of two statements that deadlock, InnoDB rolls one back. */
async function threeTries<T>(statement: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement()
    } catch (error) {
      if (tries === 3) throw error
    }
  }
}

// Long: a store is an object of eleven short methods closing over one connection and table (as the
// Knex adapter is); each method is read on its own.
export function knexStore(knex: Knex, tableName: string, createTable: boolean, label: string): SessionStore {
  /** A query of the table, on `on` (a transaction) or the pool. */
  const rows = (on: Knex | Knex.Transaction = knex): Knex.QueryBuilder => on(tableName)
  let ready: Promise<void> | undefined
  // The table, once set up (not awaitable itself: a Knex query builder is a thenable that runs).
  const table = async (): Promise<{ query: Knex.QueryBuilder }> => {
    // One setup per store; a failed one is tried again on the next call.
    ready ??= (createTable ? ensureStoreTable(knex, tableName) : Promise.resolve()).catch((error: unknown) => {
      ready = undefined
      throw error
    })
    await ready
    return { query: rows() }
  }
  let writes = 0
  const sweep = async (): Promise<void> => {
    if (++writes % SWEEP_EVERY !== 0) return
    await rows().where('expires', '<=', Date.now()).del()
  }
  const sessionKey = (id: string) => `s:${id}`

  return {
    label,
    async prepare() {
      await table()
    },
    async createSession(session, tokenIssuedAt) {
      await (await table()).query.insert({
        key: sessionKey(session.id),
        userId: session.userId,
        createdAt: session.createdAt,
        lastSeenAt: session.lastSeenAt,
        expires: session.expires,
        ipAddress: session.ipAddress,
        userAgent: session.userAgent,
      })
      await sweep()
      // Written first, checked after (two statements, each committed): a sign-out everywhere sets
      // "valid after" before it deletes the user's records (devices.ts), so either this read sees the
      // new time, or the record was committed before that delete began, and the delete ends it. A check
      // before the write (or in one statement with it) could be passed by both.
      if (tokenIssuedAt === undefined) return true
      const row = (await rows().first('value').where({ key: `va:${session.userId}` }).andWhere('expires', '>', Date.now())) as Row | undefined
      if ((Number(row?.value) || 0) <= tokenIssuedAt) return true
      await rows().where({ key: sessionKey(session.id) }).del()
      return false
    },
    async touchSession(id, userId, lastSeenAt, expires) {
      const updated = await (await table()).query.where({ key: sessionKey(id), userId }).andWhere('expires', '>', Date.now()).update({ lastSeenAt, expires })
      return Number(updated) > 0
    },
    async sessionStates(asked) {
      const keys = new Set<string>()
      for (const { id, userId } of asked) {
        keys.add(`va:${userId}`)
        if (id !== undefined) keys.add(sessionKey(id))
      }
      const rows = (await (await table()).query.select('key', 'userId', 'createdAt', 'lastSeenAt', 'expires', 'ipAddress', 'userAgent', 'value').whereIn('key', [...keys])) as Row[]
      const now = Date.now()
      const found = new Map(rows.filter((row) => Number(row.expires) > now).map((row) => [String(row.key), row]))
      return asked.map(({ id, userId }) => {
        const row = id === undefined ? undefined : found.get(sessionKey(id))
        return { session: row && row.userId === userId ? fromRow(row) : null, validAfter: Number(found.get(`va:${userId}`)?.value) || 0 }
      })
    },
    async listSessions(userId, now) {
      const rows = (await (await table()).query
        .select('key', 'userId', 'createdAt', 'lastSeenAt', 'expires', 'ipAddress', 'userAgent')
        .where({ userId })
        .andWhere('expires', '>', now)) as Row[]
      return rows.map(fromRow)
    },
    async deleteSessions(userId, which: SessionSelection) {
      await table()
      return knex.transaction(async (trx) => {
        const query = () => {
          const selected = rows(trx).where({ userId })
          if ('only' in which) selected.andWhere('key', sessionKey(which.only))
          else if (which.except !== undefined) selected.andWhereNot('key', sessionKey(which.except))
          return selected
        }
        const ids = ((await query().select('key')) as Row[]).map((row) => String(row.key).slice(2))
        if (ids.length > 0) {
          await query().del()
          await rows(trx).insert(ids.map((id) => changeRow(`s:${id}`)))
        }
        return ids
      })
    },
    async setValidAfter(userId, at, ttlMs) {
      await table()
      await knex.transaction(async (trx) => {
        await rows(trx)
          .insert({ key: `va:${userId}`, value: String(at), expires: Date.now() + ttlMs })
          .onConflict('key')
          .merge(['value', 'expires'])
        await rows(trx).insert(changeRow(`u:${userId}`))
      })
      await sweep()
    },
    async changesSince(cursor) {
      const now = Date.now()
      if (cursor === undefined) return { cursor: String(now), sessionIds: [], userIds: [] }
      const rows = (await (await table()).query
        .select('value')
        .where({ userId: CHANGES_USER })
        .andWhere('createdAt', '>=', Number(cursor) - CHANGES_OVERLAP_MS)) as Row[]
      const sessionIds: string[] = []
      const userIds: string[] = []
      for (const row of rows) {
        const value = String(row.value)
        const list = value.startsWith('s:') ? sessionIds : userIds
        list.push(value.slice(2))
      }
      return { cursor: String(now), sessionIds, userIds }
    },
    async claim(key, value, ttlMs) {
      const row = { key: `k:${key}`, value, expires: Date.now() + ttlMs }
      const store = await table()
      try {
        await store.query.insert(row)
        return true
      } catch (error) {
        // Taken: by a live lease (refused), or by one whose time ran out (taken over, by one claimer).
        // InnoDB may roll this delete back as the victim of a deadlock with another claimer's delete
        // or insert (seen on MariaDB with 8 claimers: 5 of 200 rounds); nothing was deleted then, so
        // it is tried again.
        const expired = await threeTries(async () => Number(await rows().where({ key: row.key }).andWhere('expires', '<=', Date.now()).del()))
        const held = async () => (await rows().where({ key: row.key }).first('key')) !== undefined
        if (expired === 0 && (await held())) return false
        // This call deleted the lapsed lease, or another claimer did and has not written its own yet
        // (or the insert failed for another reason): whichever insert lands has the lease. InnoDB may
        // roll back one of several inserts waiting on that delete (a deadlock victim) before the
        // winner's insert is seen: so up to three tries; an insert that cannot land fails each time.
        for (let tries = 1; ; tries++) {
          try {
            await rows().insert(row)
            return true
          } catch {
            if (expired > 0 || (await held())) return false
            if (tries === 3) throw error
          }
        }
      }
    },
    async get(key) {
      const row = (await (await table()).query.first('value').where({ key: `k:${key}` }).andWhere('expires', '>', Date.now())) as Row | undefined
      return row ? String(row.value) : null
    },
    async put(key, value, ttlMs) {
      await (await table()).query
        .insert({ key: `k:${key}`, value, expires: Date.now() + ttlMs })
        .onConflict('key')
        .merge(['value', 'expires'])
      await sweep()
    },
    async remove(key) {
      await (await table()).query.where({ key: `k:${key}` }).del()
    },
  }
}

function fromRow(row: Row): StoredSession {
  return {
    id: String(row.key).slice(2),
    userId: String(row.userId),
    createdAt: Number(row.createdAt),
    lastSeenAt: Number(row.lastSeenAt),
    expires: Number(row.expires),
    ipAddress: row.ipAddress === null ? null : String(row.ipAddress),
    userAgent: row.userAgent === null ? null : String(row.userAgent),
  }
}

/** Creates the store's table when it is missing (by one of several processes starting at once). */
export async function ensureStoreTable(knex: Knex, tableName: string): Promise<void> {
  // A plain name (letters, digits, "_": resolve.ts checks it), so the indexes' names are too.
  const index = tableName.toLowerCase()
  await createTableUnlessExists(knex, tableName, (table) => {
    // Binary collation on MySQL/MariaDB (Knex emits `collate` for them only): ids differ by case.
    table.string('key', 255).collate('utf8mb4_bin').notNullable().primary()
    table.string('userId', 255).collate('utf8mb4_bin').nullable().index(`${index}_user_index`)
    table.bigInteger('createdAt').nullable()
    table.bigInteger('lastSeenAt').nullable()
    table.bigInteger('expires').notNullable().index(`${index}_expires_index`)
    table.string('ipAddress', 64).nullable()
    table.string('userAgent', 512).nullable()
    table.text('value').nullable()
  })
}

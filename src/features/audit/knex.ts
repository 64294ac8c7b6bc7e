/**
 * The Knex adapter's audit log (the audit migration's table), composed into `KnexAdapter` by
 * src/adapters/knex/index.ts: batched inserts, a user's events newest first, the retention's prune
 * in batches (the prune wing's batched delete), and a deleted user's events kept without the user.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableString, toDate, toUtcText, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import { batchSizeOf, deleteExpired } from '../prune/knex.js'
import type { Adapter } from '../../types.js'
import type { AuditEvent, AuditEventType } from './types.js'

/** `KnexAdapter`'s audit methods (see `Adapter` for each). */
export interface KnexAuditMethods extends Required<Pick<Adapter, 'writeAuditEvents' | 'listAuditEvents' | 'pruneAuditEvents'>> {}

/** The audit methods on `knex`'s audit table. */
export function knexAuditMethods(knex: Knex, { tables, auditEvents: c }: Readonly<KnexNaming>, { read, utcText }: RowCodec): KnexAuditMethods {
  const stored = (date: Date): Knex.Value => (utcText ? toUtcText(date) : date)
  const toRow = (event: AuditEvent): Row => ({
    [c.id]: event.id,
    [c.at]: stored(event.at),
    [c.type]: event.type,
    [c.outcome]: event.outcome,
    [c.userId]: event.userId,
    [c.actorId]: event.actorId,
    [c.target]: event.target?.slice(0, 255) ?? null,
    [c.method]: event.method?.slice(0, 64) ?? null,
    [c.reason]: event.reason?.slice(0, 64) ?? null,
    [c.ipAddress]: event.ipAddress,
    [c.userAgent]: event.userAgent,
    [c.requestId]: event.requestId,
    [c.details]: event.details === null ? null : JSON.stringify(event.details),
  })
  const toEvent = (row: Row): AuditEvent => ({
    id: String(row[c.id]),
    at: toDate(row[c.at]),
    type: String(row[c.type]) as AuditEventType,
    outcome: row[c.outcome] === 'failure' ? 'failure' : 'success',
    userId: nullableString(row[c.userId]),
    actorId: nullableString(row[c.actorId]),
    target: nullableString(row[c.target]),
    method: nullableString(row[c.method]),
    reason: nullableString(row[c.reason]),
    ipAddress: nullableString(row[c.ipAddress]),
    userAgent: nullableString(row[c.userAgent]),
    requestId: nullableString(row[c.requestId]),
    details: row[c.details] === null || row[c.details] === undefined ? null : (JSON.parse(String(row[c.details])) as AuditEvent['details']),
  })
  return {
    async writeAuditEvents(events) {
      if (events.length > 0) await knex(tables.auditEvents).insert(events.map(toRow))
    },

    async listAuditEvents(filter) {
      const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 100), 1), 1000)
      const query = knex(tables.auditEvents).select('*')
      if (filter.userId !== undefined) query.where(c.userId, filter.userId)
      if (filter.type !== undefined) query.whereIn(c.type, typeof filter.type === 'string' ? [filter.type] : [...filter.type])
      if (filter.since !== undefined) query.where(c.at, '>=', stored(filter.since))
      if (filter.before !== undefined) query.where(c.at, '<', stored(filter.before))
      // Newest first; the id orders events of one instant the same way on every read.
      const rows = (await read(query.orderBy([{ column: c.at, order: 'desc' }, { column: c.id, order: 'desc' }]).limit(limit))) as Row[]
      return rows.map(toEvent)
    },

    async pruneAuditEvents(before, options = {}) {
      return deleteExpired(knex, undefined, { table: tables.auditEvents, key: c.id, expires: c.at, cutoff: utcText ? toUtcText(before) : before }, batchSizeOf({}), options.signal)
    },
  }
}

/** A deleted user's events stay, naming nobody: deleteUser clears the user (and actor) in its transaction. */
export function knexAuditUserRows(knex: Knex, { tables, auditEvents: c }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.auditEvents, async (trx, userId) => {
    await trx(tables.auditEvents).where(c.userId, userId).update({ [c.userId]: null })
    await trx(tables.auditEvents).where(c.actorId, userId).update({ [c.actorId]: null })
  })
}

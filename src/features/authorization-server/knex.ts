/**
 * The Knex adapter's records of the authorization server (its migration's OAuthRecord table),
 * composed into `KnexAdapter` by src/adapters/knex/index.ts. One row per oidc-provider model and id:
 * the payload as JSON, and the fields records are looked up by in indexed columns of their own.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableDate, toUtcText, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import type { AdapterOAuthRecord } from './types.js'

type OAuthRecordMethod = 'upsertOAuthRecord' | 'findOAuthRecord' | 'findOAuthRecordBy' | 'consumeOAuthRecord' | 'deleteOAuthRecord' | 'deleteOAuthGrant' | 'listOAuthRecords' | 'deleteOAuthAccount' | 'pruneOAuthRecords'

/** `KnexAdapter`'s authorization server methods (see `Adapter` for each). */
export interface KnexOAuthRecordMethods extends Required<Pick<Adapter, OAuthRecordMethod>> {}

/** The payload's string field, for its column; longer values than the column holds are not looked up by it. */
function lookupField(payload: Record<string, unknown>, field: string, max: number): string | null {
  const value = payload[field]
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : null
}

// Long: nine short methods closing over one connection and one naming, each read on its own.
/** The authorization server's methods on `knex`'s OAuthRecord table. */
export function knexOAuthRecordMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, utcText }: RowCodec): KnexOAuthRecordMethods {
  const { tables, oauthRecords: c } = naming
  const at = (date: Date): Knex.Value => (utcText ? toUtcText(date) : date)
  const table = () => knex(tables.oauthRecords)
  // Not expired: no expiry, or one still ahead.
  const standing = (query: Knex.QueryBuilder): Knex.QueryBuilder => query.where((q) => q.whereNull(c.expiresAt).orWhere(c.expiresAt, '>', at(new Date())))
  const toFound = (row: Row | undefined) => (row ? { payload: JSON.parse(String(row[c.payload])) as Record<string, unknown>, consumedAt: nullableDate(row[c.consumedAt]) } : null)
  return {
    async upsertOAuthRecord({ model, id, payload, expiresAt }) {
      const row: Row = {
        [c.model]: model,
        [c.id]: id,
        [c.payload]: JSON.stringify(payload),
        [c.grantId]: lookupField(payload, 'grantId', 255),
        [c.userCode]: lookupField(payload, 'userCode', 64),
        [c.uid]: lookupField(payload, 'uid', 255),
        [c.accountId]: lookupField(payload, 'accountId', 255),
        [c.clientId]: lookupField(payload, 'clientId', 255),
        [c.expiresAt]: expiresAt ? at(expiresAt) : null,
        [c.consumedAt]: null,
      }
      // The consumed mark is kept across a save of the same record (oidc-provider saves a consumed code again).
      const { [c.consumedAt]: _kept, ...changed } = row
      await table().insert(row).onConflict([c.model, c.id]).merge(changed)
    },
    async findOAuthRecord(model, id) {
      return toFound((await read(standing(table().where({ [c.model]: model, [c.id]: id }))).first()) as Row | undefined)
    },
    async findOAuthRecordBy(model, field, value) {
      return toFound((await read(standing(table().where({ [c.model]: model, [c[field]]: value }))).first()) as Row | undefined)
    },
    async consumeOAuthRecord(model, id, when) {
      // Conditional: of two requests racing with one code, one marks it and the other learns it lost.
      return Number(await table().where({ [c.model]: model, [c.id]: id }).whereNull(c.consumedAt).update({ [c.consumedAt]: at(when) })) > 0
    },
    async deleteOAuthRecord(model, id) {
      await table().where({ [c.model]: model, [c.id]: id }).del()
    },
    async deleteOAuthGrant(grantId) {
      await knex.transaction(async (trx) => {
        await trx(tables.oauthRecords).where(c.grantId, grantId).del()
        await trx(tables.oauthRecords).where({ [c.model]: 'Grant', [c.id]: grantId }).del()
      })
    },
    async listOAuthRecords(accountId, model) {
      const rows = (await read(standing(table().where({ [c.accountId]: accountId, [c.model]: model })))) as Row[]
      return rows.map((row): AdapterOAuthRecord => ({ model, id: String(row[c.id]), payload: JSON.parse(String(row[c.payload])) as Record<string, unknown>, expiresAt: nullableDate(row[c.expiresAt]) }))
    },
    async deleteOAuthAccount(accountId) {
      return Number(await table().where(c.accountId, accountId).del())
    },
    async pruneOAuthRecords(before) {
      return Number(await table().where(c.expiresAt, '<', at(before)).del())
    },
  }
}

/** The user's records (grants, refresh tokens, sessions), deleted with the user. */
export function knexOAuthRecordUserRows(knex: Knex, naming: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, naming.tables.oauthRecords, async (trx, userId) => {
    await trx(naming.tables.oauthRecords).where(naming.oauthRecords.accountId, userId).del()
  })
}

/**
 * The Knex adapter's user listing for the admin API, composed into `KnexAdapter` by
 * src/adapters/knex/index.ts: a search by id, or by part of an address or a name, case-insensitive,
 * ordered by address, with the count of all matches. The users table's own columns only.
 */
import type { Knex } from 'knex'
import { columnCheck } from '../../adapters/knex/base.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableDate, nullableString, toUtcText, type Row, type RowCodec } from '../../adapters/knex/rows.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { Adapter } from '../../types.js'

/** `KnexAdapter`'s user listing and bans. */
export interface KnexAdminMethods extends Required<Pick<Adapter, 'listUsers' | 'banUser' | 'unbanUser' | 'getUserBan'>> {}

/** The user listing and the bans on `knex`'s users table. */
export function knexAdminMethods(knex: Knex, { tables, users: u }: Readonly<KnexNaming>, { read, utcText }: RowCodec): KnexAdminMethods {
  const stored = (date: Date): Knex.Value => (utcText ? toUtcText(date) : date)
  // Whether the fourteenth migration has run.
  const banExists = columnCheck(knex, tables.users, u.bannedAt)
  const needBans = async () => {
    if (!(await banExists())) throw new InvalidConfigurationError('Bans need the fourteenth migration (20270108000000_portcullis_bans.js): run the migrations.')
  }
  return {
    async banUser(userId, { at, reason, expiresAt }) {
      await needBans()
      return (await knex(tables.users).where(u.id, userId).update({ [u.bannedAt]: stored(at), [u.banReason]: reason, [u.banExpiresAt]: expiresAt === null ? null : stored(expiresAt) })) > 0
    },

    async unbanUser(userId) {
      await needBans()
      return (await knex(tables.users).where(u.id, userId).whereNotNull(u.bannedAt).update({ [u.bannedAt]: null, [u.banReason]: null, [u.banExpiresAt]: null })) > 0
    },

    async getUserBan(userId) {
      if (!(await banExists())) return null
      const row = (await read(knex(tables.users).where(u.id, userId).first(u.bannedAt, u.banReason, u.banExpiresAt))) as Row | undefined
      const bannedAt = nullableDate(row?.[u.bannedAt])
      return bannedAt ? { bannedAt, reason: nullableString(row![u.banReason]), expiresAt: nullableDate(row![u.banExpiresAt]) } : null
    },

    async listUsers({ search, limit, offset }) {
      const matching = () => {
        const query = knex(tables.users)
        const term = search?.trim().toLowerCase()
        if (term) {
          // LIKE's wildcards in the term match themselves: escaped with `!`, which every dialect reads
          // the same way (a backslash in the SQL text is an escape on MySQL, and not on PostgreSQL).
          const pattern = `%${term.replace(/[!%_]/g, (char) => `!${char}`)}%`
          query.where((where) => {
            where.where(u.id, search!.trim()).orWhereRaw(`lower(??) like ? escape '!'`, [u.email, pattern]).orWhereRaw(`lower(??) like ? escape '!'`, [u.name, pattern])
          })
        }
        return query
      }
      const [counted] = (await matching().count({ n: '*' })) as { n: number | string }[]
      const rows = (await read(matching().select(u.id, u.name, u.email, u.emailVerified, u.image).orderBy([{ column: u.email }, { column: u.id }]).limit(limit).offset(offset))) as Row[]
      return {
        total: Number(counted?.n ?? 0),
        users: rows.map((row) => ({ id: String(row[u.id]), name: nullableString(row[u.name]), email: String(row[u.email] ?? ''), emailVerified: nullableDate(row[u.emailVerified]), image: nullableString(row[u.image]) })),
      }
    },
  }
}

/**
 * The Knex adapter's user listing for the admin API, composed into `KnexAdapter` by
 * src/adapters/knex/index.ts: a search by id, or by part of an address or a name, case-insensitive,
 * ordered by address, with the count of all matches. The users table's own columns only.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableDate, nullableString, type Row, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'

/** `KnexAdapter`'s user listing. */
export interface KnexAdminMethods extends Required<Pick<Adapter, 'listUsers'>> {}

/** The user listing on `knex`'s users table. */
export function knexAdminMethods(knex: Knex, { tables, users: u }: Readonly<KnexNaming>, { read }: RowCodec): KnexAdminMethods {
  return {
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

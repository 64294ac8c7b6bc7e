/**
 * The Knex adapter's password hashes (the `Password` provider's, the sixth migration's table),
 * composed into `KnexAdapter` by src/adapters/knex/index.ts.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { userRowsOf, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'

/** `KnexAdapter`'s password methods. */
export interface KnexPasswordMethods extends Pick<Adapter, 'getUserPassword' | 'setUserPassword' | 'deleteUserPassword'> {
  /** The user's password hash (the `Password` provider's), or `null`; needs the sixth migration. */
  getUserPassword(userId: string): Promise<string | null>
  /** Stores or replaces the user's password hash in one statement; needs the sixth migration. */
  setUserPassword(userId: string, hash: string): Promise<void>
  /** Deletes the user's password hash; `true` when there was one. */
  deleteUserPassword(userId: string): Promise<boolean>
}

/** The password methods on `knex`'s password table. */
export function knexPasswordMethods(knex: Knex, { tables, passwords }: Readonly<KnexNaming>, codec: RowCodec): KnexPasswordMethods {
  return {
    async getUserPassword(userId) {
      const row = await knex(tables.passwords).select(passwords.hash).where({ [passwords.userId]: userId }).first()
      return row ? String(row[passwords.hash]) : null
    },

    async setUserPassword(userId, hash) {
      const row = codec.values({ userId, hash, updatedAt: new Date(Date.now()) }, passwords)
      // One statement on every dialect: insert, or replace the user's row.
      await knex(tables.passwords).insert(row).onConflict(passwords.userId).merge([passwords.hash, passwords.updatedAt])
    },

    async deleteUserPassword(userId) {
      return (await knex(tables.passwords).where({ [passwords.userId]: userId }).del()) > 0
    },
  }
}

/** A user's password hash, deleted with the user (when the sixth migration has run). */
export function knexPasswordUserRows(knex: Knex, { tables, passwords }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.passwords, async (trx, userId) => {
    await trx(tables.passwords).where({ [passwords.userId]: userId }).del()
  })
}

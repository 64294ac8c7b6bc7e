/**
 * The Knex adapter's password hashes (the `Password` provider's, the sixth migration's table) and
 * usernames (its `usernames` option, the tenth migration's table), composed into `KnexAdapter` by
 * src/adapters/knex/index.ts.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { userRowsOf, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter, AdapterUser } from '../../types.js'

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

/** `KnexAdapter`'s username methods (the `usernames` option; the tenth migration's table). */
export interface KnexUsernameMethods extends Pick<Adapter, 'getUserByUsername' | 'getUsername' | 'setUsername' | 'deleteUsername'> {
  /** The user whose username has the skeleton `key`, or `null`. */
  getUserByUsername(key: string): Promise<AdapterUser | null>
  /** The user's username as chosen, or `null`. */
  getUsername(userId: string): Promise<string | null>
  /** Sets or replaces the user's username; `false` when another user has the skeleton `key`. */
  setUsername(userId: string, username: string, key: string): Promise<boolean>
  /** Deletes the user's username; `true` when there was one. */
  deleteUsername(userId: string): Promise<boolean>
}

/** The username methods on `knex`'s username table; users are read through the base's `getUser`. */
export function knexUsernameMethods(knex: Knex, { tables, usernames }: Readonly<KnexNaming>, codec: RowCodec, getUser: (id: string) => Promise<AdapterUser | null>): KnexUsernameMethods {
  const ownerOf = async (key: string): Promise<string | null> => {
    const row = await knex(tables.usernames).select(usernames.userId).where({ [usernames.usernameKey]: key }).first()
    return row ? String(row[usernames.userId]) : null
  }
  return {
    async getUserByUsername(key) {
      const userId = await ownerOf(key)
      return userId === null ? null : getUser(userId)
    },

    async getUsername(userId) {
      const row = await knex(tables.usernames).select(usernames.username).where({ [usernames.userId]: userId }).first()
      return row ? String(row[usernames.username]) : null
    },

    async setUsername(userId, username, key) {
      const row = codec.values({ userId, username, usernameKey: key, updatedAt: new Date(Date.now()) }, usernames)
      try {
        // Not an upsert: MySQL/MariaDB's ON DUPLICATE KEY UPDATE fires on any unique key, so another
        // user's name would rewrite that user's row. The user's row replaced, else inserted; the
        // unique key refuses another's name either way.
        const { [usernames.userId]: _, ...changed } = row
        if ((await knex(tables.usernames).update(changed).where({ [usernames.userId]: userId })) > 0) return true
        await knex(tables.usernames).insert(row)
        return true
      } catch (error) {
        // Any dialect's unique violation, told apart from other failures by who has the key now.
        const owner = await ownerOf(key)
        if (owner !== null && owner !== userId) return false
        throw error
      }
    },

    async deleteUsername(userId) {
      return (await knex(tables.usernames).where({ [usernames.userId]: userId }).del()) > 0
    },
  }
}

/** A user's username, deleted with the user (when the tenth migration has run). */
export function knexUsernameUserRows(knex: Knex, { tables, usernames }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.usernames, async (trx, userId) => {
    await trx(tables.usernames).where({ [usernames.userId]: userId }).del()
  })
}

/** A user's password hash, deleted with the user (when the sixth migration has run). */
export function knexPasswordUserRows(knex: Knex, { tables, passwords }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.passwords, async (trx, userId) => {
    await trx(tables.passwords).where({ [passwords.userId]: userId }).del()
  })
}

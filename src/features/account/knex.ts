/**
 * The Knex adapter's marks of accounts in their deletion grace period (`account.deletionGracePeriod`,
 * the eleventh migration's `deletedAt` column of the users table), composed into `KnexAdapter` by
 * src/adapters/knex/index.ts. Deleting a marked user for good is the base `deleteUser` with
 * `markedBefore`, so that every wing's rows go in its one transaction.
 */
import type { Knex } from 'knex'
import { columnCheck } from '../../adapters/knex/base.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { toUtcText, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'

/** `KnexAdapter`'s methods of the deletion grace period. */
export interface KnexAccountDeletionMethods extends Pick<Adapter, 'markUserDeleted' | 'restoreDeletedUser' | 'listUsersMarkedDeleted'> {
  /** Marks the user deleted at `at`; `false` when there is no such user. Needs the eleventh migration. */
  markUserDeleted(userId: string, at: Date): Promise<boolean>
  /** Clears the user's mark; `true` when it was marked. Before the eleventh migration, `false`. */
  restoreDeletedUser(userId: string): Promise<boolean>
  /** Up to `limit` ids of users marked before `before`, oldest first. Before the eleventh migration, none. */
  listUsersMarkedDeleted(before: Date, limit: number): Promise<string[]>
}

/** The grace period's methods on `knex`'s users table. */
export function knexAccountDeletionMethods(knex: Knex, { tables, users }: Readonly<KnexNaming>, { utcText }: RowCodec): KnexAccountDeletionMethods {
  const stored = (date: Date) => (utcText ? toUtcText(date) : date)
  // Whether the eleventh migration has run: sign-ins ask restoreDeletedUser whatever the option says.
  const markExists = columnCheck(knex, tables.users, users.deletedAt)
  return {
    async markUserDeleted(userId, at) {
      return (await knex(tables.users).update({ [users.deletedAt]: stored(at) }).where({ [users.id]: userId })) > 0
    },

    async restoreDeletedUser(userId) {
      if (!(await markExists())) return false
      // One statement: of a restore and the prune's locked delete (`deleteUser` with markedBefore)
      // one waits for the other, and finds no row once the other has committed.
      return (await knex(tables.users).update({ [users.deletedAt]: null }).where({ [users.id]: userId }).whereNotNull(users.deletedAt)) > 0
    },

    async listUsersMarkedDeleted(before, limit) {
      if (!(await markExists())) return []
      const rows = (await knex(tables.users).select(users.id).where(users.deletedAt, '<', stored(before) as Knex.Value).orderBy(users.deletedAt).limit(limit)) as Record<string, unknown>[]
      return rows.map((row) => String(row[users.id]))
    },
  }
}

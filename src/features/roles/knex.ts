/**
 * The Knex adapter's roles methods (the twelfth migration's `roles` column of the users table),
 * composed into `KnexAdapter` by src/adapters/knex/index.ts. The column is touched only when the
 * roles option calls these (and the session join asks for it), so an app that never turns the
 * option on need not run the migration; one that does without it is told to.
 */
import type { Knex } from 'knex'
import { columnCheck } from '../../adapters/knex/base.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import type { Adapter } from '../../types.js'
import { MAX_STORED_LENGTH, parseStoredRoles, storedRoles } from './stored.js'

/** `KnexAdapter`'s roles methods. */
export interface KnexRoleMethods extends Required<Pick<Adapter, 'getUserRoles' | 'setUserRoles'>> {}

/** The roles methods on `knex`'s users table. */
export function knexRoleMethods(knex: Knex, { tables, users }: Readonly<KnexNaming>): KnexRoleMethods {
  const rolesExist = columnCheck(knex, tables.users, users.roles)
  const assertColumn = async (): Promise<void> => {
    if (!(await rolesExist())) {
      throw new Error(`The roles option needs the twelfth migration (20261231000000_portcullis_roles.js): the ${tables.users} table has no ${users.roles} column. Run the package's migrations.`)
    }
  }
  return {
    async getUserRoles(userId) {
      await assertColumn()
      const row = (await knex(tables.users).select(users.roles).where({ [users.id]: userId }).first()) as Record<string, unknown> | undefined
      return row ? parseStoredRoles(row[users.roles]) : null
    },

    async setUserRoles(userId, roles) {
      await assertColumn()
      const value = storedRoles(roles)
      if (value !== null && value.length > MAX_STORED_LENGTH) throw new TypeError(`setUserRoles: the roles take more than ${MAX_STORED_LENGTH} characters stored.`)
      return (await knex(tables.users).update({ [users.roles]: value }).where({ [users.id]: userId })) > 0
    },
  }
}

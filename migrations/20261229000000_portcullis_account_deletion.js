// Adds when the user asked to delete the account (deletedAt, indexed) to the User table, nullable:
// the mark of an account in its deletion grace period (account.deletionGracePeriod); existing users
// are not marked. For other names use `migrationSource({ naming })` from 'portcullis/adapters/knex',
// which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261229000000_portcullis_account_deletion.js')

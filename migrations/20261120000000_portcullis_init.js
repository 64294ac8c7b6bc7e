// Creates Portcullis's four tables with the default names (User, Account, Session,
// VerificationToken). For other names use `migrationSource({ naming })` from
// 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261120000000_portcullis_init.js')

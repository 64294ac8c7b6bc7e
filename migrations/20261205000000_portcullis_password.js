// Creates the Password provider's table (a password hash per user, deleted with the user). For
// other names use `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the
// same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261205000000_portcullis_password.js')

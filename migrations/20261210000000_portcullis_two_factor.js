// Creates the second factor's tables (a TOTP enrolment per user, and the hashes of its recovery
// codes; both deleted with the user). For other names use `migrationSource({ naming })` from
// 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261210000000_portcullis_two_factor.js')

// Adds the administrator who started a session as its user (impersonatedBy, nullable) to the Session
// table: the admin API's impersonateUser. Existing sessions are the users' own. For other names use
// `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270112000000_portcullis_impersonation.js')

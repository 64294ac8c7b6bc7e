// Adds what a user recognises a session by (createdAt, lastSeenAt, ipAddress, userAgent) to the
// Session table, nullable: rows from before stay valid and Auth.js reads the table as before. For
// other names use `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the
// same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261201000000_portcullis_session_details.js')

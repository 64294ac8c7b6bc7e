// Adds when and how a database session was last confirmed (confirmedAt, confirmedWith) to the
// Session table, nullable: rows from before count as confirmed when they were created, and Auth.js
// reads the table as before. For other names use `migrationSource({ naming })` from
// 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261220000000_portcullis_account.js')

// Adds an index on lower(email) to the User table (PostgreSQL, SQLite; nothing on MySQL/MariaDB, whose
// collations ignore case already), so the adapter's case-insensitive getUserByEmail stays an index
// lookup. For other names use `migrationSource({ naming })` from 'portcullis/adapters/knex'.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261123000000_portcullis_email_lower.js')

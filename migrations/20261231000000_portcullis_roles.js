// Adds the user's roles (roles, comma-separated role names) to the User table, nullable: the `roles`
// option's storage (docs/roles.md); existing users keep the default role. For other names use
// `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261231000000_portcullis_roles.js')

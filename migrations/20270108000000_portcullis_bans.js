// Adds a user's ban (bannedAt, banReason, banExpiresAt, nullable) to the User table: the admin API's
// banUser. Existing users are not banned. For other names use `migrationSource({ naming })` from
// 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270108000000_portcullis_bans.js')

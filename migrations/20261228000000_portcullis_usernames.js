// Creates the Username table (the Password provider's `usernames` option): one row per user, the
// name as chosen and its skeleton, unique. For other names use `migrationSource({ naming })` from
// 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261228000000_portcullis_usernames.js')

// Creates the API keys table (the `apiKeys` option): the SHA-256 of each key, the part lists show,
// its owner, scopes, times, rate limit and quota. For other names use `migrationSource({ naming })`
// from 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261215000000_portcullis_api_keys.js')

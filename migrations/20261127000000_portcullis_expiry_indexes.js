// Indexes the expiry columns that pruning deletes by: Session.expires, VerificationToken.expires, and
// the rate-limit store's portcullis_rate_limit.expire when that table exists. For other names use
// `migrationSource({ naming, rateLimitTable })` from 'portcullis/adapters/knex', which records the
// same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261127000000_portcullis_expiry_indexes.js')

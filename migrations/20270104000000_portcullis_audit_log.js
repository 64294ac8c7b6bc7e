// Creates the AuditEvent table of the audit log (the `audit` option): one row per security event
// (sign-ins and their refusals, sign-outs, ended sessions, password, e-mail, second factor, passkeys,
// linked accounts, API keys, deletions), indexed by time and by user. For other names use
// `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270104000000_portcullis_audit_log.js')

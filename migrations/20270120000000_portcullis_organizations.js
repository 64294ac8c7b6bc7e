// Adds the organizations (the `organizations` option, docs/organizations.md): Organization, Member,
// Invitation, Team and TeamMember, and the session's active organization (Session.activeOrganizationId).
// For other names use `migrationSource({ naming })` from 'portcullis/adapters/knex', which records
// the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270120000000_portcullis_organizations.js')

// Adds single sign-on per organization (the `SSO` provider, docs/sso.md): SsoConnection, SsoDomain
// and SsoReplay (the used SAML assertions). Needs the organizations migration before it.
// For other names use `migrationSource({ naming })` from 'portcullis/adapters/knex', which records
// the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270125000000_portcullis_sso.js')

// Creates the Authenticator table (WebAuthn credentials, Auth.js's model and column names) with the
// default names. For other names use `migrationSource({ naming })` from 'portcullis/adapters/knex',
// which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20261125000000_portcullis_authenticator.js')

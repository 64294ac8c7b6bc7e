// Creates the authorization server's table (OAuthRecord: oidc-provider's grants, codes, refresh tokens,
// interactions and stored clients): the `authorizationServer` option. For other names use
// `migrationSource({ naming })` from 'portcullis/adapters/knex', which records the same migration name.
import { defaultMigration } from '../dist/adapters/knex/migrations.js'

export const { up, down } = defaultMigration('20270116000000_portcullis_authorization_server.js')

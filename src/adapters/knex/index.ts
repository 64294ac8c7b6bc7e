/**
 * `KnexAdapter`: users, accounts, sessions, verification tokens, WebAuthn credentials, password hashes, usernames, second factors, API keys, roles, the audit log, the authorization server's records and organizations in SQLite, PostgreSQL or
 * MySQL/MariaDB through the app's own Knex instance. The base (`base.ts`) and each feature's methods
 * (`src/features/<name>/knex.ts`) are composed here into one adapter. Create the tables with the package's
 * migrations (`migrations/`, or `migrationSource` from this module).
 *
 * @example
 * ```ts
 * import knex from 'knex'
 * import Portcullis from 'portcullis'
 * import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
 *
 * const db = knex({ client: 'better-sqlite3', connection: { filename: './auth.sqlite' }, useNullAsDefault: true })
 * await db.migrate.latest({ migrationSource: migrationSource() })
 * const { handlers, auth } = Portcullis({ adapter: KnexAdapter(db), providers: [...] })
 * ```
 * @see spec/auth-library-spec.md §2.6
 */
import type { Knex } from 'knex'
import { knexAccountDeletionMethods, type KnexAccountDeletionMethods } from '../../features/account/knex.js'
import { knexAdminMethods, type KnexAdminMethods } from '../../features/admin/knex.js'
import { knexAuditMethods, knexAuditUserRows, type KnexAuditMethods } from '../../features/audit/knex.js'
import { knexOAuthRecordMethods, knexOAuthRecordUserRows, type KnexOAuthRecordMethods } from '../../features/authorization-server/knex.js'
import { knexApiKeyMethods, knexApiKeyUserRows, type KnexApiKeyMethods } from '../../features/api-keys/knex.js'
import { knexPasskeyMethods, knexPasskeyUserRows, type KnexPasskeyMethods } from '../../features/passkey/knex.js'
import { knexPasswordMethods, knexPasswordUserRows, knexUsernameMethods, knexUsernameUserRows, type KnexPasswordMethods, type KnexUsernameMethods } from '../../features/password/knex.js'
import { knexOrganizationMethods, knexOrganizationUserRows, type KnexOrganizationMethods } from '../../features/organizations/knex.js'
import { knexTeamMethods, type KnexTeamMethods } from '../../features/organizations/knex-teams.js'
import { knexInvitationMethods, type KnexInvitationMethods } from '../../features/organizations/knex-invitations.js'
import { knexPruneMethods, type KnexPruneMethods } from '../../features/prune/knex.js'
import { knexRoleMethods, type KnexRoleMethods } from '../../features/roles/knex.js'
import { knexSsoMethods, type KnexSsoMethods } from '../../features/sso/knex.js'
import { knexTwoFactorMethods, knexTwoFactorUserRows, type KnexTwoFactorMethods } from '../../features/two-factor/knex.js'
import type { Adapter } from '../../types.js'
import { knexBaseMethods, type KnexAdapterOptions, type KnexBaseMethods } from './base.js'
import { resolveNaming } from './naming.js'
import { rowCodec } from './rows.js'

export { defaultNaming, snakeCaseNaming, resolveNaming } from './naming.js'
export type * from './naming.js'
export { migrationSource, defaultMigration, type Migration, type MigrationSourceOptions } from './migrations.js'
export { pruneRateLimits, type RateLimitPruneOptions, type RateLimitPruneResult } from '../../features/prune/rate-limits.js'
export type { KnexPruneOptions, KnexPruneResult, PruneBatchOptions } from '../../features/prune/knex.js'
export type { KnexAccountDeletionMethods, KnexAdapterOptions, KnexAdminMethods, KnexAuditMethods, KnexApiKeyMethods, KnexBaseMethods, KnexOAuthRecordMethods, KnexInvitationMethods, KnexOrganizationMethods, KnexPasskeyMethods, KnexTeamMethods, KnexPasswordMethods, KnexPruneMethods, KnexRoleMethods, KnexSsoMethods, KnexTwoFactorMethods, KnexUsernameMethods }

/** The adapter `KnexAdapter` returns: every method of `Adapter`, with its exact results. */
export interface KnexAdapterInstance extends KnexBaseMethods, KnexPasskeyMethods, KnexPasswordMethods, KnexTwoFactorMethods, KnexPruneMethods, KnexApiKeyMethods, KnexUsernameMethods, KnexAccountDeletionMethods, KnexRoleMethods, KnexAuditMethods, KnexAdminMethods, KnexOAuthRecordMethods, KnexOrganizationMethods, KnexInvitationMethods, KnexTeamMethods, KnexSsoMethods {}

/**
 * Creates the adapter. Ids are UUIDs generated here, so every database behaves the same.
 *
 * @param knex The app's Knex instance (better-sqlite3, sqlite3, pg or mysql2 client).
 * @throws TypeError when `knex` is not a Knex instance or `naming` is invalid.
 */
export function KnexAdapter(knex: Knex, options: KnexAdapterOptions = {}): KnexAdapterInstance {
  if (typeof knex !== 'function' || typeof (knex as { schema?: unknown }).schema !== 'object') {
    throw new TypeError('KnexAdapter(knex): pass a Knex instance, e.g. knex({ client: "pg", connection: process.env.DATABASE_URL }).')
  }
  const naming = resolveNaming(options.naming)
  const codec = rowCodec(knex)
  // deleteUser deletes the features' rows of the user in this order, before the user's own row.
  const userRows = [knexPasskeyUserRows(knex, naming), knexPasswordUserRows(knex, naming), knexTwoFactorUserRows(knex, naming), knexApiKeyUserRows(knex, naming), knexUsernameUserRows(knex, naming), knexAuditUserRows(knex, naming), knexOAuthRecordUserRows(knex, naming), knexOrganizationUserRows(knex, naming)]
  const base = knexBaseMethods(knex, naming, codec, options, userRows)
  const adapter: KnexAdapterInstance = {
    ...base,
    ...knexPasskeyMethods(knex, naming, codec),
    ...knexPasswordMethods(knex, naming, codec),
    ...knexTwoFactorMethods(knex, naming, codec),
    ...knexPruneMethods(knex, naming, codec),
    ...knexApiKeyMethods(knex, naming, codec),
    ...knexUsernameMethods(knex, naming, codec, base.getUser),
    ...knexAccountDeletionMethods(knex, naming, codec),
    ...knexRoleMethods(knex, naming),
    ...knexAuditMethods(knex, naming, codec),
    ...knexAdminMethods(knex, naming, codec),
    ...knexOAuthRecordMethods(knex, naming, codec),
    ...knexOrganizationMethods(knex, naming, codec),
    ...knexTeamMethods(knex, naming, codec),
    ...knexInvitationMethods(knex, naming, codec),
    ...knexSsoMethods(knex, naming, codec),
  }
  return adapter satisfies Adapter
}

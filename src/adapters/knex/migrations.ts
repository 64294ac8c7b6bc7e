/**
 * The Knex adapter's schema, as migrations. The same list backs the files in the package's
 * `migrations/` folder (run by `knex migrate:latest` with the default names) and `migrationSource`
 * (for `knex.migrate.latest({ migrationSource })`, with any naming). Both record the same migration
 * names, so an app can move from one to the other.
 *
 * @see spec/auth-library-spec.md §2.6
 */
import type { Knex } from 'knex'
import { resolveNaming, type KnexNaming, type KnexNamingOption } from './naming.js'

/** One migration of `migrationSource()`, with the naming it creates. */
export interface Migration {
  /** As Knex records it: the file name in `migrations/`, extension included. */
  name: string
  up(knex: Knex, naming: Readonly<KnexNaming>, rateLimitTable: string | undefined): Promise<void>
  down(knex: Knex, naming: Readonly<KnexNaming>): Promise<void>
}

/** The rate-limit store's default table (`rateLimit.store.tableName`). */
const DEFAULT_RATE_LIMIT_TABLE = 'portcullis_rate_limit'

// Identifiers hold generated UUIDs or an app's own ids; 255 characters fit every index on
// MySQL/MariaDB's utf8mb4 (3072 bytes per index, the widest here is two such columns).
const ID_LENGTH = 255

const MIGRATIONS: readonly Migration[] = [
  {
    name: '20261120000000_portcullis_init.js',
    async up(knex, { tables, users, accounts, sessions, verificationTokens }) {
      await knex.schema.createTable(tables.users, (table) => {
        table.string(users.id, ID_LENGTH).notNullable().primary()
        table.string(users.name, 255).nullable()
        table.string(users.email, 255).nullable().unique()
        dateColumn(table, users.emailVerified).nullable()
        table.text(users.image).nullable()
      })
      await knex.schema.createTable(tables.accounts, (table) => {
        table.string(accounts.id, ID_LENGTH).notNullable().primary()
        table.string(accounts.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE').index()
        table.string(accounts.type, 255).notNullable()
        table.string(accounts.provider, 255).notNullable()
        caseSensitive(table.string(accounts.providerAccountId, 255)).notNullable()
        // Long text (spec §2.6 rule 1): MySQL's default string column would cut an id_token short.
        longText(table, accounts.refresh_token)
        longText(table, accounts.access_token)
        table.bigInteger(accounts.expires_at).nullable()
        table.string(accounts.token_type, 255).nullable()
        longText(table, accounts.scope)
        longText(table, accounts.id_token)
        table.string(accounts.session_state, 255).nullable()
        table.unique([accounts.provider, accounts.providerAccountId])
      })
      await knex.schema.createTable(tables.sessions, (table) => {
        table.string(sessions.id, ID_LENGTH).notNullable().primary()
        caseSensitive(table.string(sessions.sessionToken, 255)).notNullable().unique()
        table.string(sessions.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE').index()
        dateColumn(table, sessions.expires).notNullable()
      })
      await knex.schema.createTable(tables.verificationTokens, (table) => {
        table.string(verificationTokens.identifier, 255).notNullable()
        caseSensitive(table.string(verificationTokens.token, 255)).notNullable().unique()
        dateColumn(table, verificationTokens.expires).notNullable()
        table.primary([verificationTokens.identifier, verificationTokens.token])
      })
    },
    async down(knex, { tables }) {
      // Children first: the foreign keys point at users.
      await knex.schema.dropTableIfExists(tables.verificationTokens)
      await knex.schema.dropTableIfExists(tables.sessions)
      await knex.schema.dropTableIfExists(tables.accounts)
      await knex.schema.dropTableIfExists(tables.users)
    },
  },
  {
    // getUserByEmail finds an address whatever its letter case (`lower(email) = lower(?)`); this
    // index keeps that lookup as fast as the exact one, so an unknown address costs no table scan
    // (and its timing does not tell it from a known one). MySQL/MariaDB need none: their default
    // collations ignore case, and the adapter's exact lookup already does.
    name: '20261123000000_portcullis_email_lower.js',
    async up(knex, { tables, users }) {
      if (knex.client.dialect === 'mysql') return
      await knex.raw('create index ?? on ?? (lower(??))', [emailLowerIndex(tables.users), tables.users, users.email])
    },
    async down(knex, { tables }) {
      if (knex.client.dialect === 'mysql') return
      await knex.raw('drop index if exists ??', [emailLowerIndex(tables.users)])
    },
  },
  {
    // WebAuthn credentials, as Auth.js's `Authenticator` model has them (same columns, same
    // names with the default naming), so an Auth.js app and a Portcullis app can share the table.
    name: '20261125000000_portcullis_authenticator.js',
    async up(knex, { tables, users, authenticators }) {
      await knex.schema.createTable(tables.authenticators, (table) => {
        // Base64 credential ids are case-sensitive: a binary collation on MySQL/MariaDB.
        caseSensitive(table.string(authenticators.credentialID, 255)).notNullable().unique()
        table.string(authenticators.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE')
        caseSensitive(table.string(authenticators.providerAccountId, 255)).notNullable()
        table.text(authenticators.credentialPublicKey).notNullable()
        // WebAuthn's signature counter is an unsigned 32-bit number: past a signed `integer`.
        table.bigInteger(authenticators.counter).notNullable()
        table.string(authenticators.credentialDeviceType, 255).notNullable()
        table.boolean(authenticators.credentialBackedUp).notNullable()
        table.string(authenticators.transports, 255).nullable()
        // Auth.js's key; it also indexes userId for listAuthenticatorsByUserId and the cascade.
        table.primary([authenticators.userId, authenticators.credentialID])
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.authenticators)
    },
  },
  {
    // Pruning (KnexAdapter.prune, pruneRateLimits) deletes by expiry: these indexes make each batch
    // a range scan of the expired rows, never a scan of the table. The rate-limit table is indexed
    // when it exists already (the store creates new ones with the index).
    name: '20261127000000_portcullis_expiry_indexes.js',
    async up(knex, { tables, sessions, verificationTokens }, rateLimitTable) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.index([sessions.expires], tableIndex(tables.sessions, 'expires'))
      })
      await knex.schema.alterTable(tables.verificationTokens, (table) => {
        table.index([verificationTokens.expires], tableIndex(tables.verificationTokens, 'expires'))
      })
      if (rateLimitTable && (await knex.schema.hasTable(rateLimitTable)) && !(await hasRateLimitIndex(knex, rateLimitTable))) {
        await knex.schema.alterTable(rateLimitTable, (table) => {
          table.index(['expire'], rateLimitExpireIndex(rateLimitTable))
        })
      }
    },
    async down(knex, { tables, sessions, verificationTokens }) {
      // The rate-limit table's index stays: the store creates its tables with it.
      await knex.schema.alterTable(tables.verificationTokens, (table) => {
        table.dropIndex([verificationTokens.expires], tableIndex(tables.verificationTokens, 'expires'))
      })
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.dropIndex([sessions.expires], tableIndex(tables.sessions, 'expires'))
      })
    },
  },
  {
    // What a user recognises a session by (listSessions()): nullable, so rows from before stay valid
    // and Auth.js, which selects its own columns, reads the table as before.
    name: '20261201000000_portcullis_session_details.js',
    async up(knex, { tables, sessions }) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        dateColumn(table, sessions.createdAt).nullable()
        dateColumn(table, sessions.lastSeenAt).nullable()
        table.string(sessions.ipAddress, 64).nullable()
        table.string(sessions.userAgent, 512).nullable()
      })
    },
    async down(knex, { tables, sessions }) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.dropColumns(sessions.createdAt, sessions.lastSeenAt, sessions.ipAddress, sessions.userAgent)
      })
    },
  },
  {
    // The Password provider's hashes: a table of their own, so that no query of the users or
    // accounts tables (the app's, Auth.js's, a log of them) reads a hash by accident. One row per
    // user, gone with the user.
    name: '20261205000000_portcullis_password.js',
    async up(knex, { tables, users, passwords }) {
      await knex.schema.createTable(tables.passwords, (table) => {
        table.string(passwords.userId, ID_LENGTH).notNullable().primary().references(users.id).inTable(tables.users).onDelete('CASCADE')
        // scrypt's string is about 100 characters, bcrypt's 60, argon2's about 100; room for others.
        caseSensitive(table.string(passwords.hash, 512)).notNullable()
        dateColumn(table, passwords.updatedAt).notNullable()
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.passwords)
    },
  },
  {
    // The second factor (TOTP, RFC 6238): the sealed secret and the last time step accepted (so a
    // code is good once), one row per user; and the recovery codes' hashes, one row per unused code,
    // so using one is a single DELETE. Tables of their own, as the password's, gone with the user.
    name: '20261210000000_portcullis_two_factor.js',
    async up(knex, { tables, users, twoFactors, recoveryCodes }) {
      await knex.schema.createTable(tables.twoFactors, (table) => {
        table.string(twoFactors.userId, ID_LENGTH).notNullable().primary().references(users.id).inTable(tables.users).onDelete('CASCADE')
        // Sealed by Portcullis, never in the clear: case-sensitive text, as the password hash.
        caseSensitive(table.string(twoFactors.secret, 512)).notNullable()
        dateColumn(table, twoFactors.enabledAt).nullable()
        // A TOTP time step (Unix time / 30 s); pg returns bigint as a string, the adapter converts.
        table.bigInteger(twoFactors.lastUsedStep).nullable()
        dateColumn(table, twoFactors.updatedAt).notNullable()
      })
      await knex.schema.createTable(tables.recoveryCodes, (table) => {
        table.string(recoveryCodes.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE')
        caseSensitive(table.string(recoveryCodes.codeHash, 128)).notNullable()
        // Also indexes userId, for the count, the replacement and the cascade.
        table.primary([recoveryCodes.userId, recoveryCodes.codeHash])
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.recoveryCodes)
      await knex.schema.dropTableIfExists(tables.twoFactors)
    },
  },
  {
    // API keys (the `apiKeys` option): the SHA-256 of the whole key, unique, so a key is found by one
    // index lookup; the short part lists show; the owner as a type and an id (a user today, an
    // organization later), so no foreign key: the adapter's lookup joins the owner (a deleted user's
    // keys stop at once) and deleteUser deletes the user's keys. Indexed on the owner (the lists)
    // and on the expiry (pruning; a revoked key expires when it is revoked).
    name: '20261215000000_portcullis_api_keys.js',
    async up(knex, { tables, apiKeys }) {
      await knex.schema.createTable(tables.apiKeys, (table) => {
        table.string(apiKeys.id, ID_LENGTH).notNullable().primary()
        // Hex of SHA-256: compared byte for byte (binary collation on MySQL/MariaDB).
        caseSensitive(table.string(apiKeys.keyHash, 64)).notNullable().unique()
        table.string(apiKeys.display, 64).notNullable()
        table.string(apiKeys.name, 255).notNullable()
        table.string(apiKeys.ownerType, 32).notNullable()
        table.string(apiKeys.ownerId, ID_LENGTH).notNullable()
        table.string(apiKeys.createdBy, ID_LENGTH).nullable()
        table.text(apiKeys.scopes).notNullable()
        table.text(apiKeys.metadata).nullable()
        dateColumn(table, apiKeys.createdAt).notNullable()
        dateColumn(table, apiKeys.expiresAt).nullable().index(tableIndex(tables.apiKeys, 'expires'))
        dateColumn(table, apiKeys.revokedAt).nullable()
        dateColumn(table, apiKeys.lastUsedAt).nullable()
        table.integer(apiKeys.rateLimitMax).nullable()
        table.integer(apiKeys.rateLimitWindow).nullable()
        table.integer(apiKeys.remaining).nullable()
        table.integer(apiKeys.refillAmount).nullable()
        table.integer(apiKeys.refillInterval).nullable()
        dateColumn(table, apiKeys.lastRefillAt).nullable()
        table.index([apiKeys.ownerType, apiKeys.ownerId], tableIndex(tables.apiKeys, 'owner'))
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.apiKeys)
    },
  },
  {
    // The account's own page (docs/account.md): when and how a database session was last confirmed,
    // for requireRecentSignIn. Nullable: older rows count as confirmed when they were created.
    name: '20261220000000_portcullis_account.js',
    async up(knex, { tables, sessions }) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        dateColumn(table, sessions.confirmedAt).nullable()
        table.string(sessions.confirmedWith, 64).nullable()
      })
    },
    async down(knex, { tables, sessions }) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.dropColumns(sessions.confirmedAt, sessions.confirmedWith)
      })
    },
  },
  {
    // Usernames (the Password provider's `usernames` option): a table of their own, one row per
    // user, as the password's, rather than columns of the users table: every user read (the session
    // read too) selects the users table's columns by name, which would fail until this migration
    // runs, and the users table stays Auth.js's. The skeleton is unique: that index decides between
    // two sign-ups claiming one name. Bytes compared on MySQL/MariaDB, whose default collations
    // would also fold accents the skeleton keeps apart in names of other scripts.
    name: '20261228000000_portcullis_usernames.js',
    async up(knex, { tables, users, usernames }) {
      await knex.schema.createTable(tables.usernames, (table) => {
        table.string(usernames.userId, ID_LENGTH).notNullable().primary().references(users.id).inTable(tables.users).onDelete('CASCADE')
        // At most 64 characters chosen; the skeleton may be longer (`ß` folds to `ss`).
        table.string(usernames.username, 64).notNullable()
        caseSensitive(table.string(usernames.usernameKey, 128)).notNullable().unique()
        dateColumn(table, usernames.updatedAt).notNullable()
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.usernames)
    },
  },
  {
    // The account's deletion grace period (account.deletionGracePeriod, docs/account.md): when the
    // user asked to delete the account, null while it is not marked. Indexed for the prune, which
    // looks for the marks older than the period. Nullable: every existing user is not marked.
    name: '20261229000000_portcullis_account_deletion.js',
    async up(knex, { tables, users }) {
      await knex.schema.alterTable(tables.users, (table) => {
        dateColumn(table, users.deletedAt).nullable().index(tableIndex(tables.users, 'deleted'))
      })
    },
    async down(knex, { tables, users }) {
      await knex.schema.alterTable(tables.users, (table) => {
        table.dropIndex([users.deletedAt], tableIndex(tables.users, 'deleted'))
      })
      await dropColumns(knex, tables.users, [users.deletedAt])
    },
  },
  {
    // The twelfth: the user's roles (the `roles` option, docs/roles.md), comma-separated role names,
    // null for the default role. Nullable and without a default: every existing user keeps the
    // default role, and an app that never turns the option on never reads it.
    name: '20261231000000_portcullis_roles.js',
    async up(knex, { tables, users }) {
      await knex.schema.alterTable(tables.users, (table) => {
        table.string(users.roles, 255).nullable()
      })
    },
    async down(knex, { tables, users }) {
      await dropColumns(knex, tables.users, [users.roles])
    },
  },
  {
    // The audit log (the `audit` option, docs/audit.md): one row per security event, written after
    // the response. No foreign key to the users table: a deleted user's events stay, their user
    // cleared by deleteUser (the trail of what happened outlives the account, naming nobody), and a
    // write never waits on a user row's lock. Indexed for the two reads: a user's events newest
    // first, and the prune's and the export's range of times.
    name: '20270104000000_portcullis_audit_log.js',
    async up(knex, { tables, auditEvents: c }) {
      await knex.schema.createTable(tables.auditEvents, (table) => {
        table.string(c.id, ID_LENGTH).notNullable().primary()
        dateColumn(table, c.at).notNullable().index(tableIndex(tables.auditEvents, 'at'))
        table.string(c.type, 64).notNullable()
        table.string(c.outcome, 16).notNullable()
        table.string(c.userId, ID_LENGTH).nullable()
        table.string(c.actorId, ID_LENGTH).nullable()
        table.string(c.target, 255).nullable()
        table.string(c.method, 64).nullable()
        table.string(c.reason, 64).nullable()
        table.string(c.ipAddress, 64).nullable()
        table.string(c.userAgent, 512).nullable()
        table.string(c.requestId, 300).nullable()
        table.text(c.details).nullable()
        table.index([c.userId, c.at], tableIndex(tables.auditEvents, 'user'))
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.auditEvents)
    },
  },
  {
    // Bans (the admin API's banUser, docs/admin.md): when, why and until when, null while the user is
    // not banned. On the users table, which the API key lookup already joins: a banned owner's keys
    // are refused in the same query. No user read selects them.
    name: '20270108000000_portcullis_bans.js',
    async up(knex, { tables, users }) {
      await knex.schema.alterTable(tables.users, (table) => {
        dateColumn(table, users.bannedAt).nullable()
        table.string(users.banReason, 500).nullable()
        dateColumn(table, users.banExpiresAt).nullable()
      })
    },
    async down(knex, { tables, users }) {
      await dropColumns(knex, tables.users, [users.bannedAt, users.banReason, users.banExpiresAt])
    },
  },
  {
    // Impersonation (the admin API's impersonateUser, docs/admin.md): the administrator who started a
    // session as its user, null on the user's own sessions (every existing one). On the sessions
    // table, read in the session read's one join only when the admin option is on.
    name: '20270112000000_portcullis_impersonation.js',
    async up(knex, { tables, sessions }) {
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.string(sessions.impersonatedBy, ID_LENGTH).nullable()
      })
    },
    async down(knex, { tables, sessions }) {
      await dropColumns(knex, tables.sessions, [sessions.impersonatedBy])
    },
  },
  {
    // The authorization server (the `authorizationServer` option, docs/authorization-server.md):
    // oidc-provider's records (grants, authorization and device codes, refresh tokens, interactions,
    // its sessions, stored clients), one row per model and id, the payload as JSON. The fields it
    // looks records up by are columns of their own, indexed: a grant's tokens (revoking the grant),
    // a device flow's user code, a session's uid, a user's grants (the "apps with access" page,
    // deleting the user). No foreign key to the users table: machine clients' grants have no user,
    // and deleteUser removes a user's rows itself. Access tokens are JWTs and have no row.
    name: '20270116000000_portcullis_authorization_server.js',
    async up(knex, { tables, oauthRecords: c }) {
      await knex.schema.createTable(tables.oauthRecords, (table) => {
        table.string(c.model, 64).notNullable()
        caseSensitive(table.string(c.id, ID_LENGTH)).notNullable()
        table.text(c.payload, 'mediumtext').notNullable()
        caseSensitive(table.string(c.grantId, ID_LENGTH)).nullable().index(tableIndex(tables.oauthRecords, 'grant'))
        caseSensitive(table.string(c.userCode, 64)).nullable().index(tableIndex(tables.oauthRecords, 'user_code'))
        caseSensitive(table.string(c.uid, ID_LENGTH)).nullable().index(tableIndex(tables.oauthRecords, 'uid'))
        table.string(c.accountId, ID_LENGTH).nullable()
        table.string(c.clientId, ID_LENGTH).nullable()
        dateColumn(table, c.expiresAt).nullable().index(tableIndex(tables.oauthRecords, 'expires'))
        dateColumn(table, c.consumedAt).nullable()
        table.primary([c.model, c.id])
        table.index([c.accountId, c.model], tableIndex(tables.oauthRecords, 'account'))
      })
    },
    async down(knex, { tables }) {
      await knex.schema.dropTableIfExists(tables.oauthRecords)
    },
  },
  {
    // Organizations (the `organizations` option, docs/organizations.md): the organizations, their
    // members with their roles there, the invitations by e-mail (the SHA-256 of each token, unique:
    // an invitation is found by its token's hash alone), and the optional teams. Deleting an
    // organization or a user deletes their memberships and invitations (foreign keys, and
    // deleteUser). The sessions table gains the session's active organization, read in the session
    // read's one join (with the member's roles) only when the option is on.
    name: '20270120000000_portcullis_organizations.js',
    async up(knex, { tables, users, sessions, organizations: o, members: m, invitations: i, teams: t, teamMembers: tm }) {
      await knex.schema.createTable(tables.organizations, (table) => {
        table.string(o.id, ID_LENGTH).notNullable().primary()
        table.string(o.name, 255).notNullable()
        caseSensitive(table.string(o.slug, 64)).notNullable().unique()
        table.text(o.logo).nullable()
        table.text(o.metadata).nullable()
        dateColumn(table, o.createdAt).notNullable()
      })
      await knex.schema.createTable(tables.members, (table) => {
        table.string(m.id, ID_LENGTH).notNullable().primary()
        table.string(m.organizationId, ID_LENGTH).notNullable().references(o.id).inTable(tables.organizations).onDelete('CASCADE')
        table.string(m.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE').index(tableIndex(tables.members, 'user'))
        table.string(m.role, 255).notNullable()
        dateColumn(table, m.createdAt).notNullable()
        table.unique([m.organizationId, m.userId])
      })
      await knex.schema.createTable(tables.teams, (table) => {
        table.string(t.id, ID_LENGTH).notNullable().primary()
        table.string(t.organizationId, ID_LENGTH).notNullable().references(o.id).inTable(tables.organizations).onDelete('CASCADE').index(tableIndex(tables.teams, 'organization'))
        table.string(t.name, 255).notNullable()
        dateColumn(table, t.createdAt).notNullable()
      })
      await knex.schema.createTable(tables.teamMembers, (table) => {
        table.string(tm.teamId, ID_LENGTH).notNullable().references(t.id).inTable(tables.teams).onDelete('CASCADE')
        table.string(tm.userId, ID_LENGTH).notNullable().references(users.id).inTable(tables.users).onDelete('CASCADE').index(tableIndex(tables.teamMembers, 'user'))
        dateColumn(table, tm.createdAt).notNullable()
        table.primary([tm.teamId, tm.userId])
      })
      await knex.schema.createTable(tables.invitations, (table) => {
        table.string(i.id, ID_LENGTH).notNullable().primary()
        table.string(i.organizationId, ID_LENGTH).notNullable().references(o.id).inTable(tables.organizations).onDelete('CASCADE')
        table.string(i.email, 255).notNullable().index(tableIndex(tables.invitations, 'email'))
        table.string(i.role, 255).notNullable()
        table.string(i.teamId, ID_LENGTH).nullable()
        caseSensitive(table.string(i.tokenHash, 64)).notNullable().unique()
        table.string(i.status, 16).notNullable()
        table.string(i.inviterId, ID_LENGTH).nullable()
        dateColumn(table, i.createdAt).notNullable()
        dateColumn(table, i.expiresAt).notNullable().index(tableIndex(tables.invitations, 'expires'))
        dateColumn(table, i.sentAt).notNullable()
        table.index([i.organizationId, i.status], tableIndex(tables.invitations, 'organization'))
      })
      await knex.schema.alterTable(tables.sessions, (table) => {
        table.string(sessions.activeOrganizationId, ID_LENGTH).nullable()
      })
    },
    async down(knex, { tables, sessions }) {
      await dropColumns(knex, tables.sessions, [sessions.activeOrganizationId])
      for (const table of [tables.invitations, tables.teamMembers, tables.teams, tables.members, tables.organizations]) await knex.schema.dropTableIfExists(table)
    },
  },
  {
    // Single sign-on per organization (the `SSO` provider, docs/sso.md): an organization's
    // connections to its own identity provider (OIDC or SAML), the domains it claims (verified by a
    // DNS record or an administrator), and the used SAML assertions' ids, which every process reads
    // before accepting one. An organization's deletion takes its connections and domains with it.
    name: '20270125000000_portcullis_sso.js',
    async up(knex, { tables, organizations: o, ssoConnections: c, ssoDomains: d, ssoReplays: r }) {
      await knex.schema.createTable(tables.ssoConnections, (table) => {
        table.string(c.id, ID_LENGTH).notNullable().primary()
        table.string(c.organizationId, ID_LENGTH).notNullable().references(o.id).inTable(tables.organizations).onDelete('CASCADE').index(tableIndex(tables.ssoConnections, 'organization'))
        table.string(c.type, 8).notNullable()
        table.string(c.name, 255).notNullable()
        table.boolean(c.enabled).notNullable()
        table.boolean(c.ssoOnly).notNullable()
        table.string(c.defaultRole, 255).notNullable()
        table.text(c.settings).notNullable()
        dateColumn(table, c.createdAt).notNullable()
        dateColumn(table, c.updatedAt).notNullable()
      })
      await knex.schema.createTable(tables.ssoDomains, (table) => {
        table.string(d.id, ID_LENGTH).notNullable().primary()
        table.string(d.organizationId, ID_LENGTH).notNullable().references(o.id).inTable(tables.organizations).onDelete('CASCADE').index(tableIndex(tables.ssoDomains, 'organization'))
        // Unique per organization, not across them: an unverified claim must not keep the domain's owner out.
        caseSensitive(table.string(d.domain, 253)).notNullable().index(tableIndex(tables.ssoDomains, 'domain'))
        caseSensitive(table.string(d.token, 64)).notNullable()
        dateColumn(table, d.verifiedAt).nullable()
        table.string(d.verifiedBy, 16).nullable()
        dateColumn(table, d.createdAt).notNullable()
        table.unique([d.domain, d.organizationId])
      })
      await knex.schema.createTable(tables.ssoReplays, (table) => {
        caseSensitive(table.string(r.key, 64)).notNullable().primary()
        dateColumn(table, r.expiresAt).notNullable().index(tableIndex(tables.ssoReplays, 'expires'))
      })
    },
    async down(knex, { tables }) {
      for (const table of [tables.ssoReplays, tables.ssoDomains, tables.ssoConnections]) await knex.schema.dropTableIfExists(table)
    },
  },
]

/**
 * Drops columns of a table. Knex drops a SQLite column by copying the table and dropping the old
 * one, whose foreign keys cascade (of the users table: every user's sessions, accounts and passwords
 * would go) and whose indexes go with it; SQLite (3.35 on) drops them in place instead.
 */
async function dropColumns(knex: Knex, table: string, columns: readonly string[]): Promise<void> {
  if (knex.client.dialect === 'sqlite3') {
    for (const column of columns) await knex.raw('alter table ?? drop column ??', [table, column])
    return
  }
  await knex.schema.alterTable(table, (builder) => {
    builder.dropColumns(...columns)
  })
}

/** `session_expires_index`, `apikey_owner_index`, `user_deleted_index`: one identifier, whatever the table's schema. */
function tableIndex(table: string, what: 'expires' | 'owner' | 'deleted' | 'at' | 'user' | 'grant' | 'user_code' | 'uid' | 'account' | 'organization' | 'email' | 'domain'): string {
  return `${table.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_${what}_index`
}

/** The index on the rate-limit table's `expire`, as the store and the fourth migration name it. */
export function rateLimitExpireIndex(table: string): string {
  return `${table.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_expire_index`
}

async function hasRateLimitIndex(knex: Knex, table: string): Promise<boolean> {
  const name = rateLimitExpireIndex(table)
  switch (knex.client.dialect) {
    case 'postgresql':
      return ((await knex.raw('select 1 from pg_indexes where indexname = ?', [name])) as { rows: unknown[] }).rows.length > 0
    case 'mysql':
      return ((await knex.raw('select 1 from information_schema.statistics where table_schema = database() and index_name = ?', [name])) as [unknown[]])[0].length > 0
    default:
      return ((await knex.raw("select 1 from sqlite_master where type = 'index' and name = ?", [name])) as unknown[]).length > 0
  }
}

function emailLowerIndex(usersTable: string): string {
  // One identifier: a schema-qualified table name (`auth.users`) must not qualify the index.
  return `${usersTable.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_email_lower_index`
}

// Millisecond precision everywhere: PostgreSQL `timestamptz(3)`, MySQL/MariaDB `datetime(3)`
// (not `timestamp`, which ends in 2038), SQLite stores what Knex binds (milliseconds).
function dateColumn(table: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string): Knex.ColumnBuilder {
  return table.datetime(name, { precision: 3 })
}

// MySQL/MariaDB's default collations ignore letter case, so `aBc` would find the row of `ABC`:
// a session or e-mail token would match variants of itself, and one provider's account ids
// (OIDC `sub` is case-sensitive) could match another user's. A binary collation compares
// bytes. Only the MySQL dialect of Knex emits `collate`; the others are case-sensitive already.
function caseSensitive(column: Knex.ColumnBuilder): Knex.ColumnBuilder {
  return column.collate('utf8mb4_bin')
}

function longText(table: Knex.CreateTableBuilder, name: string): void {
  table.text(name, 'mediumtext').nullable()
}

/** Options of `migrationSource`. */
export interface MigrationSourceOptions {
  /** The same naming as the adapter's. Default `default`. */
  naming?: KnexNamingOption
  /**
   * The Knex rate-limit store's table (`rateLimit.store.tableName`), indexed on `expire` by the
   * fourth migration when it exists. Default `portcullis_rate_limit`.
   */
  rateLimitTable?: string
}

/**
 * A Knex migration source that creates the adapter's tables with the given names.
 *
 * @example
 * ```ts
 * import { migrationSource } from 'portcullis/adapters/knex'
 * await knex.migrate.latest({ migrationSource: migrationSource({ naming: 'snake_case' }) })
 * ```
 * @see https://knexjs.org/guide/migrations.html#custom-migration-sources
 */
export function migrationSource(options: MigrationSourceOptions = {}): Knex.MigrationSource<Migration> {
  const naming = resolveNaming(options.naming)
  const rateLimitTable = options.rateLimitTable ?? DEFAULT_RATE_LIMIT_TABLE
  return {
    getMigrations: async () => [...MIGRATIONS],
    getMigrationName: (migration) => migration.name,
    getMigration: async (migration) => ({
      up: (knex: Knex) => migration.up(knex, naming, rateLimitTable),
      down: (knex: Knex) => migration.down(knex, naming),
    }),
  }
}

/**
 * The `up`/`down` pair of one migration with the default names: what the files in the package's
 * `migrations/` folder export.
 *
 * @throws TypeError for a name that is not one of the package's migrations.
 */
export function defaultMigration(name: string): { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> } {
  const migration = MIGRATIONS.find((candidate) => candidate.name === name)
  if (!migration) throw new TypeError(`Portcullis has no migration named "${name}".`)
  const naming = resolveNaming('default')
  return { up: (knex) => migration.up(knex, naming, DEFAULT_RATE_LIMIT_TABLE), down: (knex) => migration.down(knex, naming) }
}

/**
 * The package's Knex migrations as users run them: the real Knex CLI, spawned with plain `node`
 * from a temporary app (ESM or CommonJS) whose `node_modules/portcullis` is this repository, on a
 * SQLite file. Covers the `migrations/` folder (`migrations.directory` in a knexfile), the exported
 * `migrationSource` (in a knexfile and programmatically), switching from one to the other, and
 * combining the package's migrations with an app's own.
 *
 * Runs the built output (dist/): `npm test` builds first.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { STEP_LIMIT_MS, TEST_LIMIT_MS } from '../support/time-limits.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const MIGRATION = '20261120000000_portcullis_init.js'
/** The second migration: the index on lower(email) behind the case-insensitive getUserByEmail. */
const EMAIL_LOWER = '20261123000000_portcullis_email_lower.js'
/** The third: Auth.js's Authenticator table (WebAuthn credentials). */
const AUTHENTICATOR = '20261125000000_portcullis_authenticator.js'
/** The fourth: indexes on the expiry columns that pruning deletes by. */
const EXPIRY_INDEXES = '20261127000000_portcullis_expiry_indexes.js'
/** The fifth: what a user recognises a session by, nullable columns of the sessions table. */
const SESSION_DETAILS = '20261201000000_portcullis_session_details.js'
/** The sixth: the Password provider's hashes, a table of their own. */
const PASSWORD = '20261205000000_portcullis_password.js'
/** The seventh: the second factor's TOTP enrolments and recovery codes, two tables. */
const TWO_FACTOR = '20261210000000_portcullis_two_factor.js'
/** The eighth: API keys, one table. */
const API_KEYS = '20261215000000_portcullis_api_keys.js'
/** The ninth: when and how a database session was last confirmed, nullable columns of the sessions table. */
const ACCOUNT = '20261220000000_portcullis_account.js'
/** The tenth: the Password provider's usernames, a table of their own. */
const USERNAMES = '20261228000000_portcullis_usernames.js'
/** The eleventh: the mark of an account in its deletion grace period, a nullable column of the users table. */
const ACCOUNT_DELETION = '20261229000000_portcullis_account_deletion.js'
/** The twelfth: the user's roles, a nullable column of the users table (`roles` in both namings). */
const ROLES = '20261231000000_portcullis_roles.js'
/** The thirteenth: the audit log's table (the `audit` option). */
const AUDIT_LOG = '20270104000000_portcullis_audit_log.js'
/** The fourteenth: a user's ban, three nullable columns of the users table. */
const BANS = '20270108000000_portcullis_bans.js'
const IMPERSONATION = '20270112000000_portcullis_impersonation.js'
const AUTHORIZATION_SERVER = '20270116000000_portcullis_authorization_server.js'
/** The seventeenth: organizations, their members, invitations and teams, and the session's active organization. */
const ORGANIZATIONS = '20270120000000_portcullis_organizations.js'
/** The eighteenth: single sign-on's connections, domains and used SAML assertions. */
const SSO = '20270125000000_portcullis_sso.js'
const PACKAGE_MIGRATIONS = [MIGRATION, EMAIL_LOWER, AUTHENTICATOR, EXPIRY_INDEXES, SESSION_DETAILS, PASSWORD, TWO_FACTOR, API_KEYS, ACCOUNT, USERNAMES, ACCOUNT_DELETION, ROLES, AUDIT_LOG, BANS, IMPERSONATION, AUTHORIZATION_SERVER, ORGANIZATIONS, SSO]
/** How many migrations the package ships, as the CLI counts them. */
const COUNT = PACKAGE_MIGRATIONS.length
let base: string

beforeAll(() => {
  // `npm test` builds first; building here too keeps `npx jest test/migrations` honest on its own.
  if (!existsSync(join(root, 'dist/adapters/knex/migrations.js'))) {
    const build = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8', timeout: TEST_LIMIT_MS })
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`)
  }
  base = mkdtempSync(join(tmpdir(), 'portcullis-knex-cli-'))
}, TEST_LIMIT_MS + STEP_LIMIT_MS)

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------
// A temporary app: package.json, files, and node_modules/{portcullis,knex,better-sqlite3} as
// symlinks (ESM resolution ignores NODE_PATH), so `import ... from 'portcullis/adapters/knex'` and
// `directory: 'node_modules/portcullis/migrations'` read exactly as they would in an installed app.

let appCount = 0
function makeApp(type: 'module' | 'commonjs', files: Record<string, string>): string {
  const dir = join(base, `app${++appCount}`)
  mkdirSync(join(dir, 'node_modules'), { recursive: true })
  const pkg = type === 'module' ? { name: `app${appCount}`, private: true, type: 'module' } : { name: `app${appCount}`, private: true }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg))
  symlinkSync(root, join(dir, 'node_modules/portcullis'), 'dir')
  for (const dep of ['knex', 'better-sqlite3']) symlinkSync(join(root, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir')
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

interface Run {
  stdout: string
  stderr: string
}

// Plain node, no Jest flags, no colours; a failure shows everything the child printed. The tests are
// synchronous, so Jest's own limit never fires: STEP_LIMIT_MS is the bound on a hung CLI.
function node(app: string, args: string[]): Run {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1' }
  delete env.FORCE_COLOR
  const result = spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8', timeout: STEP_LIMIT_MS, env })
  if (result.error || result.status !== 0) {
    throw new Error(`node ${args.join(' ')} (in ${app}) failed: ${result.error?.message ?? `exit ${result.status}`}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`)
  }
  // Knex prints nothing on stderr when all goes well: no deprecation or "FS-related option" warning.
  // (require(esm) may print an ExperimentalWarning on some Node versions: not ours to fail on.)
  const stray = result.stderr.split('\n').filter((line) => line.trim() && !/ExperimentalWarning|--trace-warnings/.test(line))
  expect(stray).toEqual([])
  return { stdout: result.stdout, stderr: result.stderr }
}

const knexCli = (app: string, ...args: string[]): string => node(app, ['node_modules/knex/bin/cli.js', ...args]).stdout

// ---------------------------------------------------------------------------------------------
// The database, read directly.

interface TableShape {
  columns: Record<string, { type: string; notNull: boolean; pk: number }>
  foreignKeys: string[]
  unique: string[][]
  indexes: string[][]
}

function userTables(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name").all() as { name: string }[]
    return rows.map((row) => row.name)
  } finally {
    db.close()
  }
}

function shape(file: string, table: string): TableShape {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const quoted = `"${table.replaceAll('"', '""')}"`
    const columns: TableShape['columns'] = {}
    for (const c of db.prepare(`pragma table_info(${quoted})`).all() as { name: string; type: string; notnull: number; pk: number }[]) {
      columns[c.name] = { type: c.type, notNull: c.notnull === 1, pk: c.pk }
    }
    const foreignKeys = (db.prepare(`pragma foreign_key_list(${quoted})`).all() as { from: string; table: string; to: string; on_delete: string }[]).map(
      (fk) => `${fk.from} -> ${fk.table}.${fk.to} on delete ${fk.on_delete}`,
    )
    const unique: string[][] = []
    const indexes: string[][] = []
    for (const index of db.prepare(`pragma index_list(${quoted})`).all() as { name: string; unique: number; origin: string }[]) {
      if (index.origin === 'pk') continue
      const cols = (db.prepare(`pragma index_info("${index.name.replaceAll('"', '""')}")`).all() as { name: string }[]).map((c) => c.name)
      ;(index.unique ? unique : indexes).push(cols)
    }
    return { columns, foreignKeys: foreignKeys.sort(), unique: unique.sort(), indexes: indexes.sort() }
  } finally {
    db.close()
  }
}

function migrationRows(file: string, tableName = 'knex_migrations'): { name: string; batch: number }[] {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return db.prepare(`select name, batch from "${tableName}" order by id`).all() as { name: string; batch: number }[]
  } finally {
    db.close()
  }
}

const KNEX_TABLES = ['knex_migrations', 'knex_migrations_lock']
const DEFAULT_TABLES = ['Account', 'ApiKey', 'AuditEvent', 'Authenticator', 'Invitation', 'Member', 'OAuthRecord', 'Organization', 'Password', 'RecoveryCode', 'Session', 'SsoConnection', 'SsoDomain', 'SsoReplay', 'Team', 'TeamMember', 'TwoFactor', 'User', 'Username', 'VerificationToken']
const SNAKE_TABLES = ['accounts', 'api_keys', 'audit_events', 'authenticators', 'invitations', 'members', 'oauth_records', 'organizations', 'passwords', 'recovery_codes', 'sessions', 'sso_connections', 'sso_domains', 'sso_replays', 'team_members', 'teams', 'two_factors', 'usernames', 'users', 'verificationtokens']
const sorted = (names: string[]) => [...names].sort()

// The eleven tables, column by column, with the names of one naming.
function expectSchema(
  file: string,
  n: {
    tables: {
      users: string
      accounts: string
      sessions: string
      verificationTokens: string
      authenticators: string
      passwords: string
      twoFactors: string
      recoveryCodes: string
      apiKeys: string
      usernames: string
      auditEvents: string
    }
    usernameKey: string
    keyHash: string
    ownerId: string
    expiresAt: string
    emailVerified: string
    deletedAt: string
    bannedAt: string
    banReason: string
    banExpiresAt: string
    updatedAt: string
    enabledAt: string
    lastUsedStep: string
    codeHash: string
    userId: string
    providerAccountId: string
    sessionToken: string
    credentialID: string
    sessionDetails: [createdAt: string, lastSeenAt: string, ipAddress: string, userAgent: string]
    sessionConfirmation: [confirmedAt: string, confirmedWith: string]
    impersonatedBy: string
    activeOrganizationId: string
  },
): void {
  const users = shape(file, n.tables.users)
  expect(users.columns).toEqual({
    id: { type: 'varchar(255)', notNull: true, pk: 1 },
    name: { type: 'varchar(255)', notNull: false, pk: 0 },
    email: { type: 'varchar(255)', notNull: false, pk: 0 },
    [n.emailVerified]: { type: 'datetime', notNull: false, pk: 0 },
    image: { type: 'TEXT', notNull: false, pk: 0 },
    // The eleventh migration's: the mark of an account in its deletion grace period.
    [n.deletedAt]: { type: 'datetime', notNull: false, pk: 0 },
    // The twelfth's: the user's roles, comma-separated.
    roles: { type: 'varchar(255)', notNull: false, pk: 0 },
    // The fourteenth's: a ban.
    [n.bannedAt]: { type: 'datetime', notNull: false, pk: 0 },
    [n.banReason]: { type: 'varchar(500)', notNull: false, pk: 0 },
    [n.banExpiresAt]: { type: 'datetime', notNull: false, pk: 0 },
  })
  expect(users.unique).toEqual([['email']])
  // The second migration's index on lower(email) (an expression: SQLite names no column), the eleventh's on deletedAt.
  expect(users.indexes).toEqual([[null], [n.deletedAt]])

  const accounts = shape(file, n.tables.accounts)
  expect(Object.keys(accounts.columns)).toEqual([
    'id', n.userId, 'type', 'provider', n.providerAccountId, 'refresh_token', 'access_token', 'expires_at', 'token_type', 'scope', 'id_token', 'session_state',
  ])
  expect(accounts.columns.id?.pk).toBe(1)
  expect(accounts.columns[n.userId]?.notNull).toBe(true)
  expect(accounts.columns.expires_at?.type).toBe('bigint')
  expect(accounts.columns.id_token?.type).toBe('TEXT')
  expect(accounts.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])
  expect(accounts.unique).toEqual([['provider', n.providerAccountId]])
  expect(accounts.indexes).toEqual([[n.userId]])

  const sessions = shape(file, n.tables.sessions)
  expect(sessions.columns).toEqual({
    id: { type: 'varchar(255)', notNull: true, pk: 1 },
    [n.sessionToken]: { type: 'varchar(255)', notNull: true, pk: 0 },
    [n.userId]: { type: 'varchar(255)', notNull: true, pk: 0 },
    expires: { type: 'datetime', notNull: true, pk: 0 },
    [n.sessionDetails[0]]: { type: 'datetime', notNull: false, pk: 0 },
    [n.sessionDetails[1]]: { type: 'datetime', notNull: false, pk: 0 },
    [n.sessionDetails[2]]: { type: 'varchar(64)', notNull: false, pk: 0 },
    [n.sessionDetails[3]]: { type: 'varchar(512)', notNull: false, pk: 0 },
    // The ninth migration's: the session's last confirmation (requireRecentSignIn).
    [n.sessionConfirmation[0]]: { type: 'datetime', notNull: false, pk: 0 },
    [n.sessionConfirmation[1]]: { type: 'varchar(64)', notNull: false, pk: 0 },
    // The fifteenth's: the administrator who started the session as its user (impersonation).
    [n.impersonatedBy]: { type: 'varchar(255)', notNull: false, pk: 0 },
    [n.activeOrganizationId]: { type: 'varchar(255)', notNull: false, pk: 0 },
  })
  expect(sessions.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])
  expect(sessions.unique).toEqual([[n.sessionToken]])
  expect(sessions.indexes).toEqual([['expires'], [n.userId]])

  const tokens = shape(file, n.tables.verificationTokens)
  expect(tokens.columns).toEqual({
    identifier: { type: 'varchar(255)', notNull: true, pk: 1 },
    token: { type: 'varchar(255)', notNull: true, pk: 2 },
    expires: { type: 'datetime', notNull: true, pk: 0 },
  })
  expect(tokens.unique).toEqual([['token']])
  expect(tokens.indexes).toEqual([['expires']])

  // The third migration: Auth.js's Authenticator model, primary key (userId, credentialID).
  const authenticators = shape(file, n.tables.authenticators)
  expect(Object.keys(authenticators.columns)).toEqual([
    n.credentialID, n.userId, n.providerAccountId, ...Object.keys(authenticators.columns).slice(3),
  ])
  expect(authenticators.columns[n.userId]).toEqual({ type: 'varchar(255)', notNull: true, pk: 1 })
  expect(authenticators.columns[n.credentialID]).toEqual({ type: 'varchar(255)', notNull: true, pk: 2 })
  expect(authenticators.columns.counter).toEqual({ type: 'bigint', notNull: true, pk: 0 })
  expect(authenticators.columns.transports?.notNull).toBe(false)
  expect(Object.keys(authenticators.columns)).toHaveLength(8)
  expect(authenticators.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])
  expect(authenticators.unique).toEqual([[n.credentialID]])

  // The sixth: one password hash a user, deleted with the user.
  const passwords = shape(file, n.tables.passwords)
  expect(passwords.columns).toEqual({
    [n.userId]: { type: 'varchar(255)', notNull: true, pk: 1 },
    hash: { type: 'varchar(512)', notNull: true, pk: 0 },
    [n.updatedAt]: { type: 'datetime', notNull: true, pk: 0 },
  })
  expect(passwords.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])

  // The seventh: one TOTP enrolment a user, and its recovery codes' hashes, deleted with the user.
  const twoFactors = shape(file, n.tables.twoFactors)
  expect(twoFactors.columns).toEqual({
    [n.userId]: { type: 'varchar(255)', notNull: true, pk: 1 },
    secret: { type: 'varchar(512)', notNull: true, pk: 0 },
    [n.enabledAt]: { type: 'datetime', notNull: false, pk: 0 },
    [n.lastUsedStep]: { type: 'bigint', notNull: false, pk: 0 },
    [n.updatedAt]: { type: 'datetime', notNull: true, pk: 0 },
  })
  expect(twoFactors.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])
  const recoveryCodes = shape(file, n.tables.recoveryCodes)
  expect(recoveryCodes.columns).toEqual({
    [n.userId]: { type: 'varchar(255)', notNull: true, pk: 1 },
    [n.codeHash]: { type: 'varchar(128)', notNull: true, pk: 2 },
  })
  expect(recoveryCodes.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])

  // The eighth: API keys, found by the unique hash; no foreign key (the owner may be a user or an organization).
  const apiKeys = shape(file, n.tables.apiKeys)
  expect(apiKeys.columns[n.keyHash]).toEqual({ type: 'varchar(64)', notNull: true, pk: 0 })
  expect(apiKeys.columns[n.expiresAt]).toEqual({ type: 'datetime', notNull: false, pk: 0 })
  expect(Object.keys(apiKeys.columns)).toHaveLength(19)
  expect(apiKeys.foreignKeys).toEqual([])
  expect(apiKeys.unique).toEqual([[n.keyHash]])
  expect(apiKeys.indexes).toEqual([[n.expiresAt], [n.ownerId.replace('Id', 'Type').replace('_id', '_type'), n.ownerId]].sort())

  // The tenth: one username a user, unique by its skeleton, deleted with the user.
  const usernames = shape(file, n.tables.usernames)
  expect(usernames.columns).toEqual({
    [n.userId]: { type: 'varchar(255)', notNull: true, pk: 1 },
    username: { type: 'varchar(64)', notNull: true, pk: 0 },
    [n.usernameKey]: { type: 'varchar(128)', notNull: true, pk: 0 },
    [n.updatedAt]: { type: 'datetime', notNull: true, pk: 0 },
  })
  expect(usernames.foreignKeys).toEqual([`${n.userId} -> ${n.tables.users}.id on delete CASCADE`])
  expect(usernames.unique).toEqual([[n.usernameKey]])

  // The thirteenth: the audit log, no foreign key (a deleted user's events stay, naming nobody).
  const audit = shape(file, n.tables.auditEvents)
  expect(Object.keys(audit.columns)).toHaveLength(13)
  expect(audit.columns.at).toEqual({ type: 'datetime', notNull: true, pk: 0 })
  expect(audit.columns[n.userId]).toEqual({ type: 'varchar(255)', notNull: false, pk: 0 })
  expect(audit.foreignKeys).toEqual([])
  expect(audit.indexes).toEqual([['at'], [n.userId, 'at']])
}

const DEFAULT_NAMES = {
  tables: {
    users: 'User',
    accounts: 'Account',
    sessions: 'Session',
    verificationTokens: 'VerificationToken',
    authenticators: 'Authenticator',
    passwords: 'Password',
    twoFactors: 'TwoFactor',
    recoveryCodes: 'RecoveryCode',
    apiKeys: 'ApiKey',
    usernames: 'Username',
    auditEvents: 'AuditEvent',
    oauthRecords: 'OAuthRecord',
  },
  usernameKey: 'usernameKey',
  keyHash: 'keyHash',
  ownerId: 'ownerId',
  expiresAt: 'expiresAt',
  emailVerified: 'emailVerified',
  deletedAt: 'deletedAt',
  bannedAt: 'bannedAt',
  banReason: 'banReason',
  banExpiresAt: 'banExpiresAt',
  updatedAt: 'updatedAt',
  enabledAt: 'enabledAt',
  lastUsedStep: 'lastUsedStep',
  codeHash: 'codeHash',
  userId: 'userId',
  providerAccountId: 'providerAccountId',
  sessionToken: 'sessionToken',
  credentialID: 'credentialID',
  sessionDetails: ['createdAt', 'lastSeenAt', 'ipAddress', 'userAgent'] as [string, string, string, string],
  sessionConfirmation: ['confirmedAt', 'confirmedWith'] as [string, string],
  impersonatedBy: 'impersonatedBy',
  activeOrganizationId: 'activeOrganizationId',
}
const SNAKE_NAMES = {
  tables: {
    users: 'users',
    accounts: 'accounts',
    sessions: 'sessions',
    verificationTokens: 'verificationtokens',
    authenticators: 'authenticators',
    passwords: 'passwords',
    twoFactors: 'two_factors',
    recoveryCodes: 'recovery_codes',
    apiKeys: 'api_keys',
    usernames: 'usernames',
    auditEvents: 'audit_events',
    oauthRecords: 'oauth_records',
  },
  usernameKey: 'username_key',
  keyHash: 'key_hash',
  ownerId: 'owner_id',
  expiresAt: 'expires_at',
  emailVerified: 'email_verified',
  deletedAt: 'deleted_at',
  bannedAt: 'banned_at',
  banReason: 'ban_reason',
  banExpiresAt: 'ban_expires_at',
  updatedAt: 'updated_at',
  enabledAt: 'enabled_at',
  lastUsedStep: 'last_used_step',
  codeHash: 'code_hash',
  userId: 'user_id',
  providerAccountId: 'provider_account_id',
  sessionToken: 'session_token',
  credentialID: 'credential_id',
  sessionDetails: ['created_at', 'last_seen_at', 'ip_address', 'user_agent'] as [string, string, string, string],
  sessionConfirmation: ['confirmed_at', 'confirmed_with'] as [string, string],
  impersonatedBy: 'impersonated_by',
  activeOrganizationId: 'active_organization_id',
}

// The knexfile bodies, as the README shows them.
const CONFIG = `client: 'better-sqlite3',
  connection: { filename: './app.sqlite' },
  useNullAsDefault: true,`
const ESM_KNEXFILE = `export default {
  ${CONFIG}
  migrations: { directory: 'node_modules/portcullis/migrations' },
}
`
const CJS_KNEXFILE = `module.exports = {
  ${CONFIG}
  migrations: { directory: 'node_modules/portcullis/migrations' },
}
`

// latest -> status -> latest again -> rollback -> status, through the CLI, on the default names.
function directoryRoundTrip(app: string, ...knexfile: string[]): void {
  const db = join(app, 'app.sqlite')
  expect(knexCli(app, ...knexfile, 'migrate:latest')).toContain(`Batch 1 run: ${COUNT} migrations`)
  expect(userTables(db)).toEqual(sorted([...DEFAULT_TABLES, ...KNEX_TABLES]))
  expectSchema(db, DEFAULT_NAMES)
  expect(migrationRows(db)).toEqual(PACKAGE_MIGRATIONS.map((name) => ({ name, batch: 1 })))

  const status = knexCli(app, ...knexfile, 'migrate:status')
  expect(status).toContain(`Found ${COUNT} Completed Migration file/files.`)
  expect(status).toContain(MIGRATION)
  expect(status).toContain(EMAIL_LOWER)
  expect(status).toContain('No Pending Migration files Found.')
  expect(knexCli(app, ...knexfile, 'migrate:latest')).toContain('Already up to date')

  expect(knexCli(app, ...knexfile, 'migrate:rollback')).toContain(`Batch 1 rolled back: ${COUNT} migrations`)
  expect(userTables(db)).toEqual(KNEX_TABLES)
  expect(migrationRows(db)).toEqual([])
  const after = knexCli(app, ...knexfile, 'migrate:list')
  expect(after).toContain('No Completed Migration files Found.')
  expect(after).toContain(`Found ${COUNT} Pending Migration file/files.`)
}

describe('Knex CLI, migrations.directory pointing at node_modules/portcullis/migrations', () => {
  it('an ESM app (knexfile.js with export default): latest creates the tables, status lists them, rollback drops them', () => {
    directoryRoundTrip(makeApp('module', { 'knexfile.js': ESM_KNEXFILE }))
  })

  it('a CommonJS app (knexfile.js with module.exports) loads the ESM migration file the same way', () => {
    directoryRoundTrip(makeApp('commonjs', { 'knexfile.js': CJS_KNEXFILE }))
  })

  it('a CommonJS app with config/knexfile.cjs (--knexfile; the CLI then works from config/), the folder found with require.resolve', () => {
    const knexfile = `const path = require('node:path')
module.exports = {
  client: 'better-sqlite3',
  connection: { filename: '../app.sqlite' },
  useNullAsDefault: true,
  migrations: { directory: path.join(path.dirname(require.resolve('portcullis/package.json')), 'migrations') },
}
`
    directoryRoundTrip(makeApp('commonjs', { 'config/knexfile.cjs': knexfile }), '--knexfile', 'config/knexfile.cjs')
  })

  it('the CLI does not pick up a knexfile.cjs by itself', () => {
    const app = makeApp('commonjs', { 'knexfile.cjs': CJS_KNEXFILE })
    const result = spawnSync(process.execPath, ['node_modules/knex/bin/cli.js', 'migrate:latest'], { cwd: app, encoding: 'utf8', timeout: STEP_LIMIT_MS, env: { ...process.env, NODE_OPTIONS: '' } })
    expect(result.status).not.toBe(0)
    expect(result.stdout + result.stderr).toMatch(/No configuration file found/)
  })
})

// The app's own migration, referencing the package's User table: it sorts after the package's.
const APP_MIGRATION = `export async function up(knex) {
  await knex.schema.createTable('Post', (t) => {
    t.increments('id')
    t.string('authorId', 255).notNullable().references('id').inTable('User').onDelete('CASCADE')
  })
}
export async function down(knex) {
  await knex.schema.dropTable('Post')
}
`

describe('Knex CLI, the package migrations next to the app’s own', () => {
  it('one history: directory: [the package’s folder, the app’s folder], sorted by file name across both; migrate:make writes to the last', () => {
    const app = makeApp('module', {
      'knexfile.js': ESM_KNEXFILE.replace("directory: 'node_modules/portcullis/migrations'", "directory: ['node_modules/portcullis/migrations', './migrations']"),
      'migrations/20290101000000_posts.js': APP_MIGRATION,
    })
    const db = join(app, 'app.sqlite')
    expect(knexCli(app, 'migrate:make', 'probe')).toContain('Created Migration:')
    const made = readdirSync(join(app, 'migrations')).filter((name) => name.endsWith('_probe.js'))
    expect(made).toHaveLength(1)
    expect(readdirSync(join(root, 'migrations')).filter((name) => name.includes('probe'))).toEqual([])
    rmSync(join(app, 'migrations', made[0] ?? ''))
    expect(knexCli(app, 'migrate:latest')).toContain(`Batch 1 run: ${COUNT + 1} migrations`)
    expect(migrationRows(db).map((row) => row.name)).toEqual([...PACKAGE_MIGRATIONS, '20290101000000_posts.js'])
    expect(userTables(db)).toEqual(sorted([...DEFAULT_TABLES, 'Post', ...KNEX_TABLES]))
    expect(shape(db, 'Post').foreignKeys).toEqual(['authorId -> User.id on delete CASCADE'])
    expect(knexCli(app, 'migrate:rollback')).toContain(`Batch 1 rolled back: ${COUNT + 1} migrations`)
    expect(userTables(db)).toEqual(KNEX_TABLES)
  })

  it('two histories: a second knexfile with its own tableName, run with --knexfile', () => {
    const app = makeApp('module', {
      'knexfile.js': ESM_KNEXFILE.replace("directory: 'node_modules/portcullis/migrations'", "directory: './migrations'"),
      // The folder resolved rather than spelt out: the README's form for hoisted installs.
      'knexfile.portcullis.js': `import { createRequire } from 'node:module'
import path from 'node:path'
import baseConfig from './knexfile.js'
const directory = path.join(path.dirname(createRequire(import.meta.url).resolve('portcullis/package.json')), 'migrations')
export default {
  ...baseConfig,
  migrations: { tableName: 'portcullis_migrations', directory },
}
`,
      'migrations/20290101000000_posts.js': APP_MIGRATION,
    })
    const db = join(app, 'app.sqlite')
    expect(knexCli(app, '--knexfile', 'knexfile.portcullis.js', 'migrate:latest')).toContain(`Batch 1 run: ${COUNT} migrations`)
    expect(knexCli(app, 'migrate:latest')).toContain('Batch 1 run: 1 migrations')
    expect(migrationRows(db, 'portcullis_migrations')).toEqual(PACKAGE_MIGRATIONS.map((name) => ({ name, batch: 1 })))
    expect(migrationRows(db)).toEqual([{ name: '20290101000000_posts.js', batch: 1 }])
    expect(userTables(db)).toEqual(sorted([...DEFAULT_TABLES, 'Post', ...KNEX_TABLES, 'portcullis_migrations', 'portcullis_migrations_lock']))

    expect(knexCli(app, 'migrate:rollback')).toContain('Batch 1 rolled back: 1 migrations')
    expect(knexCli(app, '--knexfile', 'knexfile.portcullis.js', 'migrate:rollback')).toContain(`Batch 1 rolled back: ${COUNT} migrations`)
    expect(userTables(db)).toEqual(sorted([...KNEX_TABLES, 'portcullis_migrations', 'portcullis_migrations_lock']))
  })
})

describe('Knex CLI, migrationSource in the knexfile', () => {
  function sourceRoundTrip(app: string): void {
    const db = join(app, 'app.sqlite')
    expect(knexCli(app, 'migrate:latest')).toContain(`Batch 1 run: ${COUNT} migrations`)
    expect(userTables(db)).toEqual(sorted([...SNAKE_TABLES, ...KNEX_TABLES]))
    expectSchema(db, SNAKE_NAMES)
    expect(migrationRows(db)).toEqual(PACKAGE_MIGRATIONS.map((name) => ({ name, batch: 1 })))
    const status = knexCli(app, 'migrate:status')
    expect(status).toContain(`Found ${COUNT} Completed Migration file/files.`)
    expect(status).toContain('No Pending Migration files Found.')
    expect(knexCli(app, 'migrate:rollback')).toContain(`Batch 1 rolled back: ${COUNT} migrations`)
    expect(userTables(db)).toEqual(KNEX_TABLES)
  }

  it("an ESM knexfile importing migrationSource({ naming: 'snake_case' }) creates users/accounts/sessions/verificationtokens; rollback drops them", () => {
    sourceRoundTrip(
      makeApp('module', {
        'knexfile.js': `import { migrationSource } from 'portcullis/adapters/knex'
export default {
  ${CONFIG}
  migrations: { migrationSource: migrationSource({ naming: 'snake_case' }) },
}
`,
      }),
    )
  })

  it('a CommonJS knexfile requiring portcullis/adapters/knex does the same', () => {
    sourceRoundTrip(
      makeApp('commonjs', {
        'knexfile.js': `const { migrationSource } = require('portcullis/adapters/knex')
module.exports = {
  ${CONFIG}
  migrations: { migrationSource: migrationSource({ naming: 'snake_case' }) },
}
`,
      }),
    )
  })
})

// A plain-node ESM script in the app: knex.migrate.* with the exported source, printing JSON.
function programmatic(app: string, body: string): unknown {
  writeFileSync(
    join(app, 'programmatic.mjs'),
    `import knex from 'knex'
import { migrationSource } from 'portcullis/adapters/knex'
const db = knex({ ${CONFIG} })
try {
  const out = {}
${body}
  console.log(JSON.stringify(out))
} finally {
  await db.destroy()
}
`,
  )
  return JSON.parse(node(app, ['programmatic.mjs']).stdout)
}

describe('switching between the directory and migrationSource', () => {
  it('both record the same migration name: latest via the CLI directory, then the source has nothing to do and rolls it back', () => {
    const app = makeApp('module', { 'knexfile.js': ESM_KNEXFILE })
    const db = join(app, 'app.sqlite')
    knexCli(app, 'migrate:latest')
    expect(
      programmatic(
        app,
        `  out.latest = await db.migrate.latest({ migrationSource: migrationSource() })
  out.list = await db.migrate.list({ migrationSource: migrationSource() })
  out.rollback = await db.migrate.rollback({ migrationSource: migrationSource() })`,
      ),
    ).toEqual({
      latest: [1, []],
      list: [PACKAGE_MIGRATIONS.map((name) => ({ name })), []],
      rollback: [1, [...PACKAGE_MIGRATIONS].reverse()],
    })
    expect(userTables(db)).toEqual(KNEX_TABLES)
    expect(migrationRows(db)).toEqual([])
  })

  it('and back: latest via the source programmatically, then the CLI directory route sees it done and rolls it back', () => {
    const app = makeApp('module', { 'knexfile.js': ESM_KNEXFILE })
    const db = join(app, 'app.sqlite')
    expect(programmatic(app, '  out.latest = await db.migrate.latest({ migrationSource: migrationSource() })')).toEqual({ latest: [1, PACKAGE_MIGRATIONS] })
    expect(userTables(db)).toEqual(sorted([...DEFAULT_TABLES, ...KNEX_TABLES]))
    expect(knexCli(app, 'migrate:latest')).toContain('Already up to date')
    expect(knexCli(app, 'migrate:rollback')).toContain(`Batch 1 rolled back: ${COUNT} migrations`)
    expect(userTables(db)).toEqual(KNEX_TABLES)
  })

  it('custom names through overrides of a preset', () => {
    const app = makeApp('module', {})
    const db = join(app, 'app.sqlite')
    const naming = `{ preset: 'snake_case', tables: { users: 'auth_users', verificationTokens: 'auth_verification_tokens' }, accounts: { userId: 'owner_id' } }`
    programmatic(app, `  out.latest = await db.migrate.latest({ migrationSource: migrationSource({ naming: ${naming} }) })`)
    expect(userTables(db)).toEqual(
      sorted(['accounts', 'api_keys', 'audit_events', 'auth_users', 'auth_verification_tokens', 'authenticators', 'invitations', 'members', 'oauth_records', 'organizations', 'passwords', 'recovery_codes', 'sessions', 'sso_connections', 'sso_domains', 'sso_replays', 'team_members', 'teams', 'two_factors', 'usernames', ...KNEX_TABLES]),
    )
    expect(shape(db, 'authenticators').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'passwords').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'two_factors').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'recovery_codes').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'usernames').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'accounts').foreignKeys).toEqual(['owner_id -> auth_users.id on delete CASCADE'])
    expect(shape(db, 'sessions').foreignKeys).toEqual(['user_id -> auth_users.id on delete CASCADE'])
    programmatic(app, `  out.rollback = await db.migrate.rollback({ migrationSource: migrationSource({ naming: ${naming} }) })`)
    expect(userTables(db)).toEqual(KNEX_TABLES)
  })
})

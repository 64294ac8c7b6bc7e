/**
 * `KnexAdapter`: users, accounts, sessions, verification tokens, WebAuthn credentials, password hashes and second factors in SQLite, PostgreSQL or
 * MySQL/MariaDB through the app's own Knex instance. Create the tables with the package's
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
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import type { LoggerInstance } from '../../logger.js'
import type {
  AccountReference,
  AccountTokenFields,
  Adapter,
  AdapterAccount,
  AdapterAuthenticator,
  AdapterSession,
  AdapterTwoFactor,
  AdapterUser,
  NewAdapterAccount,
  NewAdapterUser,
  ProviderType,
  VerificationToken,
} from '../../types.js'
import { resolveNaming, type KnexNamingOption } from './naming.js'
import { adapterPruneLock, batchSizeOf, deleteExpired, withPruneLock, type PruneBatchOptions } from '../../features/prune/knex.js'

export { defaultNaming, snakeCaseNaming, resolveNaming } from './naming.js'
export type * from './naming.js'
export { migrationSource, defaultMigration, type Migration, type MigrationSourceOptions } from './migrations.js'
export { pruneRateLimits, type RateLimitPruneOptions, type RateLimitPruneResult } from '../../features/prune/rate-limits.js'
export type { PruneBatchOptions } from '../../features/prune/knex.js'

/** Options of `KnexAdapter.prune`. */
export interface KnexPruneOptions extends PruneBatchOptions {
  /** Rows that expired before this instant are deleted. Default: now. */
  now?: Date
}

/** What `KnexAdapter.prune` deleted. */
// A type, not an interface: it fits `Adapter.prune`'s Record of counts.
export type KnexPruneResult = {
  /** Expired sessions. */
  sessions: number
  /** Expired verification tokens (e-mail links never followed). */
  verificationTokens: number
}

/** Options of `KnexAdapter`. */
export interface KnexAdapterOptions {
  /** Table and column names: `default`, `snake_case`, or overrides. Use the same in `migrationSource`. */
  naming?: KnexNamingOption
  /**
   * The app's own columns of the users table, field name → column name (`{ role: 'role', plan:
   * 'plan_name' }`): `createUser` and `updateUser` write them, every user the adapter returns
   * carries them (`null` when empty, other values as the driver returns them). Add the columns in a
   * migration of your own. Any other field given to `createUser`/`updateUser` is dropped, with a
   * debug line naming it.
   */
  userFields?: Readonly<Record<string, string>>
  /**
   * Where the adapter's debug lines go (`debug(code, ...message)`, as Portcullis's `logger.debug`).
   * Default: nowhere. Lines name fields, never their values.
   */
  logger?: Partial<Pick<LoggerInstance, 'debug'>>
}

/** The adapter `KnexAdapter` returns: every method of `Adapter`, with its exact results. */
export interface KnexAdapterInstance extends Adapter {
  createUser(user: NewAdapterUser): Promise<AdapterUser>
  getUser(id: string): Promise<AdapterUser | null>
  getUserByEmail(email: string): Promise<AdapterUser | null>
  getUserByAccount(account: AccountReference): Promise<AdapterUser | null>
  updateUser(user: Partial<AdapterUser> & Pick<AdapterUser, 'id'>): Promise<AdapterUser>
  deleteUser(id: string): Promise<AdapterUser | null>
  linkAccount(account: NewAdapterAccount): Promise<AdapterAccount>
  unlinkAccount(account: AccountReference, options?: { unlessLastOf?: string; countedProviders?: readonly string[] | undefined }): Promise<AdapterAccount | null>
  getAccountsByUserId(userId: string): Promise<AdapterAccount[]>
  updateAccount(account: AccountReference & Partial<AccountTokenFields>, options?: { expect?: Partial<AccountTokenFields> }): Promise<AdapterAccount | null>
  createSession(session: AdapterSession): Promise<AdapterSession>
  getSessionAndUser(sessionToken: string): Promise<{ session: AdapterSession; user: AdapterUser } | null>
  updateSession(session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>): Promise<AdapterSession | null>
  deleteSession(sessionToken: string): Promise<AdapterSession | null>
  listSessionsByUserId(userId: string): Promise<AdapterSession[]>
  deleteSessionsByUserId(userId: string, which: { only: string } | { except?: string | undefined }): Promise<AdapterSession[]>
  createVerificationToken(token: VerificationToken): Promise<VerificationToken>
  useVerificationToken(params: { identifier: string; token: string }): Promise<VerificationToken | null>
  getAccount(providerAccountId: string, provider: string): Promise<AdapterAccount | null>
  createAuthenticator(authenticator: AdapterAuthenticator): Promise<AdapterAuthenticator>
  getAuthenticator(credentialID: string): Promise<AdapterAuthenticator | null>
  listAuthenticatorsByUserId(userId: string): Promise<AdapterAuthenticator[]>
  /**
   * Stores the credential's new counter and returns the credential; throws when there is none. With
   * `expect`, one UPDATE whose WHERE holds the expected counter: of concurrent calls expecting the
   * same value one changes it, and the others (and a call on an unknown credential) get `null`.
   */
  updateAuthenticatorCounter(credentialID: string, newCounter: number): Promise<AdapterAuthenticator>
  updateAuthenticatorCounter(credentialID: string, newCounter: number, options: { expect?: number | undefined }): Promise<AdapterAuthenticator | null>
  /** Deletes the credential and returns it; `null` when there was none. */
  deleteAuthenticator(credentialID: string): Promise<AdapterAuthenticator | null>
  /** The user's password hash (the `Password` provider's), or `null`; needs the sixth migration. */
  getUserPassword(userId: string): Promise<string | null>
  /** Stores or replaces the user's password hash in one statement; needs the sixth migration. */
  setUserPassword(userId: string, hash: string): Promise<void>
  /** Deletes the user's password hash; `true` when there was one. */
  deleteUserPassword(userId: string): Promise<boolean>
  /** The user's TOTP enrolment and how many recovery codes are left, in one query; needs the seventh migration. */
  getTwoFactor(userId: string): Promise<AdapterTwoFactor | null>
  /** Stores a pending enrolment or replaces a pending one's secret; `false`, changing nothing, when it is confirmed. */
  startTwoFactor(userId: string, secret: string): Promise<boolean>
  /** Confirms the pending enrolment holding `secret` and replaces the recovery codes, in one transaction. */
  enableTwoFactor(userId: string, confirmation: { secret: string; step: number; enabledAt: Date; recoveryCodes: readonly string[] }): Promise<boolean>
  /** Records an accepted time step in one conditional UPDATE: `true` only when it is above the last one. */
  useTwoFactorStep(userId: string, step: number): Promise<boolean>
  /** Deletes the recovery code with this hash in one DELETE: `true` for the one call that removed it. */
  useRecoveryCode(userId: string, codeHash: string): Promise<boolean>
  /** Replaces the user's recovery codes by these hashes, in one transaction. */
  setRecoveryCodes(userId: string, codeHashes: readonly string[]): Promise<void>
  /** Deletes the enrolment and its recovery codes, in one transaction; `true` when there was an enrolment. */
  deleteTwoFactor(userId: string): Promise<boolean>
  /** Replaces the sealed secret `from` by `to` in one conditional UPDATE: `true` only while the stored one was `from`. */
  resealTwoFactor(userId: string, sealed: { from: string; to: string }): Promise<boolean>
  /**
   * Deletes expired sessions and expired verification tokens, a few thousand rows per statement
   * through the indexes of the fourth migration; rows still valid are never touched. Of several
   * processes pruning at once, one works and the others resolve to `null` at once.
   *
   * @example
   * ```ts
   * const counts = await KnexAdapter(db).prune() // { sessions: 1200, verificationTokens: 31 }, or null
   * ```
   */
  prune(options?: KnexPruneOptions): Promise<KnexPruneResult | null>
}

type Row = Record<string, unknown>

const ACCOUNT_FIELDS = [
  'userId',
  'type',
  'provider',
  'providerAccountId',
  'refresh_token',
  'access_token',
  'expires_at',
  'token_type',
  'scope',
  'id_token',
  'session_state',
] as const
const SESSION_FIELDS = ['id', 'sessionToken', 'userId', 'expires'] as const
/** The fifth migration's columns: used once they exist, so an app that has not run it keeps working. */
const SESSION_DETAIL_FIELDS = ['createdAt', 'lastSeenAt', 'ipAddress', 'userAgent'] as const
const ACCOUNT_TOKEN_FIELDS = ['refresh_token', 'access_token', 'expires_at', 'token_type', 'scope', 'id_token', 'session_state'] as const
/** getTwoFactor's alias for the count of recovery codes: no column of the two-factor table is selected under it. */
const RECOVERY_CODE_COUNT = 'portcullis_recovery_code_count'

// Long: the adapter is Auth.js's shape, an object of ~30 short methods closing over one connection
// and one naming; each method is read on its own, and splitting the object would only thread both
// through every one of them.
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
  const { tables, users, accounts, sessions, verificationTokens, authenticators, passwords, twoFactors, recoveryCodes } = resolveNaming(options.naming)
  const extraUserFields = resolveUserFields(options.userFields, users)
  // Every user field the adapter stores, built-in and the app's own, with its column.
  const userNames: Readonly<Record<string, string>> = { ...users, ...extraUserFields }
  const debug = options.logger?.debug ?? (() => {})
  /** The fields of `user` that have no column: logged by name (never their values), then dropped by `values`. */
  const reportDropped = (method: string, user: object): void => {
    const dropped = Object.keys(user).filter((field) => !Object.hasOwn(userNames, field) && (user as Row)[field] !== undefined)
    if (dropped.length === 0) return
    debug(
      'AdapterUserFieldDropped',
      `KnexAdapter ${method}: dropped ${dropped.map((field) => `"${field}"`).join(', ')}: the users table has no column for ${dropped.length === 1 ? 'it' : 'them'}. Declare it in KnexAdapter's userFields to keep it.`,
    )
  }

  // mysql2 turns DATETIME values into Dates through the connection's time zone (by default the
  // process's local one), so servers in different zones, or a daylight-saving change, would move
  // every expiry. On MySQL/MariaDB, dates are written and read as UTC text instead.
  const utcText = knex.client.dialect === 'mysql'
  const read = <Q extends Knex.QueryBuilder>(query: Q): Q => (utcText ? (query.options({ dateStrings: true }) as Q) : query)
  const values = (record: object, names: object): Row => {
    const row = columnsOf(record, names)
    if (utcText) for (const [column, value] of Object.entries(row)) if (value instanceof Date) row[column] = toUtcText(value)
    return row
  }

  // Maps between the adapter's field names and the table's column names.
  const userColumns = Object.values(userNames)
  const sessionColumns = SESSION_FIELDS.map((field) => sessions[field])
  const toUser = (row: Row, prefix = ''): AdapterUser => {
    const user: AdapterUser = {
      id: String(row[prefix + users.id]),
      name: nullableString(row[prefix + users.name]),
      email: nullableString(row[prefix + users.email]),
      emailVerified: nullableDate(row[prefix + users.emailVerified]),
      image: nullableString(row[prefix + users.image]),
    }
    for (const [field, column] of Object.entries(extraUserFields)) user[field] = row[prefix + column] ?? null
    return user
  }
  const toSession = (row: Row, prefix = ''): AdapterSession => ({
    id: String(row[prefix + sessions.id]),
    sessionToken: String(row[prefix + sessions.sessionToken]),
    userId: String(row[prefix + sessions.userId]),
    expires: toDate(row[prefix + sessions.expires]),
  })
  const withDetails = (row: Row): AdapterSession => ({
    ...toSession(row),
    createdAt: nullableDate(row[sessions.createdAt]),
    lastSeenAt: nullableDate(row[sessions.lastSeenAt]),
    ipAddress: nullableString(row[sessions.ipAddress]),
    userAgent: nullableString(row[sessions.userAgent]),
  })
  const detailColumns = SESSION_DETAIL_FIELDS.map((field) => sessions[field])
  // Whether the fifth migration has run: asked until it has, at most once a minute.
  let detailsFound = false
  let detailsAskedAt = 0
  const sessionDetailsExist = async (): Promise<boolean> => {
    if (detailsFound || Date.now() - detailsAskedAt < 60_000) return detailsFound
    detailsAskedAt = Date.now()
    return (detailsFound = await knex.schema.hasColumn(tables.sessions, sessions.userAgent))
  }
  const sessionValues = async (session: object): Promise<Row> =>
    values(pick(session, (await sessionDetailsExist()) ? [...SESSION_FIELDS, ...SESSION_DETAIL_FIELDS] : SESSION_FIELDS), sessions)
  const toAccount = (row: Row): AdapterAccount => ({
    userId: String(row[accounts.userId]),
    type: String(row[accounts.type]) as ProviderType,
    provider: String(row[accounts.provider]),
    providerAccountId: String(row[accounts.providerAccountId]),
    refresh_token: nullableString(row[accounts.refresh_token]),
    access_token: nullableString(row[accounts.access_token]),
    expires_at: row[accounts.expires_at] === null || row[accounts.expires_at] === undefined ? null : Number(row[accounts.expires_at]),
    token_type: nullableString(row[accounts.token_type]),
    scope: nullableString(row[accounts.scope]),
    id_token: nullableString(row[accounts.id_token]),
    session_state: nullableString(row[accounts.session_state]),
  })
  const toAuthenticator = (row: Row): AdapterAuthenticator => ({
    credentialID: String(row[authenticators.credentialID]),
    userId: String(row[authenticators.userId]),
    providerAccountId: String(row[authenticators.providerAccountId]),
    credentialPublicKey: String(row[authenticators.credentialPublicKey]),
    // pg returns bigint as a string; a WebAuthn counter (32 bits) fits a number exactly.
    counter: Number(row[authenticators.counter]),
    credentialDeviceType: String(row[authenticators.credentialDeviceType]),
    // SQLite and MySQL/MariaDB store booleans as 0/1.
    credentialBackedUp: row[authenticators.credentialBackedUp] === true || Number(row[authenticators.credentialBackedUp]) === 1,
    transports: nullableString(row[authenticators.transports]),
  })
  const toToken = (row: Row): VerificationToken => ({
    identifier: String(row[verificationTokens.identifier]),
    token: String(row[verificationTokens.token]),
    expires: toDate(row[verificationTokens.expires]),
  })

  // getSessionAndUser runs on every authenticated request: one join, its column list built once.
  // Aliases keep the two tables' `id` (and any other shared name) apart.
  const joinColumns = [
    ...SESSION_FIELDS.map((field) => `${tables.sessions}.${sessions[field]} as s_${sessions[field]}`),
    ...userColumns.map((column) => `${tables.users}.${column} as u_${column}`),
  ]

  // Its SQL (with `?` for the token and the limit) is built once: a query builder per read costs
  // more than SQLite's whole query.
  let joinSql: string | undefined
  const sessionJoinSql = (): string =>
    (joinSql ??= knex(tables.sessions)
      .select(joinColumns)
      .join(tables.users, `${tables.users}.${users.id}`, `${tables.sessions}.${sessions.userId}`)
      .where(`${tables.sessions}.${sessions.sessionToken}`, '')
      .limit(1)
      .toSQL().sql)
  const selectUser = (where: Row) => read(knex(tables.users).select(userColumns).where(where)).first()
  const accountWhere = (ref: AccountReference): Row => ({ [accounts.provider]: ref.provider, [accounts.providerAccountId]: ref.providerAccountId })
  const selectAuthenticator = (credentialID: string) => knex(tables.authenticators).select().where({ [authenticators.credentialID]: credentialID }).first()
  // Apps that have not run the authenticator migration yet have no such table: deleteUser must
  // still work there. Checked until the table is found, then never again.
  let hasAuthenticators = false
  const authenticatorTableExists = async (): Promise<boolean> => (hasAuthenticators ||= await knex.schema.hasTable(tables.authenticators))
  let hasPasswords = false
  const passwordTableExists = async (): Promise<boolean> => (hasPasswords ||= await knex.schema.hasTable(tables.passwords))
  // The seventh migration creates both second-factor tables: one of them answers for the two.
  let hasTwoFactors = false
  const twoFactorTablesExist = async (): Promise<boolean> => (hasTwoFactors ||= await knex.schema.hasTable(tables.twoFactors))
  const whereTwoFactor = (userId: string): Row => ({ [twoFactors.userId]: userId })
  const whereRecoveryCodes = (userId: string): Row => ({ [recoveryCodes.userId]: userId })
  const replaceRecoveryCodes = async (trx: Knex.Transaction, userId: string, codeHashes: readonly string[]): Promise<void> => {
    await trx(tables.recoveryCodes).where(whereRecoveryCodes(userId)).del()
    // Duplicates dropped: the key (userId, codeHash) would refuse them and roll the transaction back.
    const rows = [...new Set(codeHashes)].map((codeHash) => ({ [recoveryCodes.userId]: userId, [recoveryCodes.codeHash]: codeHash }))
    if (rows.length > 0) await trx(tables.recoveryCodes).insert(rows)
  }

  return {
    async createUser(user) {
      reportDropped('createUser', user)
      const created: AdapterUser = {
        id: user.id ?? randomUUID(),
        name: user.name ?? null,
        email: user.email ?? null,
        emailVerified: user.emailVerified ?? null,
        image: user.image ?? null,
      }
      for (const field of Object.keys(extraUserFields)) created[field] = user[field] ?? null
      await knex(tables.users).insert(values(created, userNames))
      return created
    },

    async getUser(id) {
      const row = await selectUser({ [users.id]: id })
      return row ? toUser(row) : null
    },

    async getUserByEmail(email) {
      // Exact first: the unique index answers it. Then regardless of letter case, so an address the
      // app stored as `Ada@Example.com` is found for `ada@example.com` (Portcullis writes and looks
      // up lower case). The second migration indexes lower(email), so both are index lookups and an
      // unknown address costs no table scan (nor a tell-tale delay). MySQL/MariaDB's default
      // collations ignore case already: there the exact lookup is the whole answer.
      const row =
        (await selectUser({ [users.email]: email })) ??
        (utcText ? undefined : await read(knex(tables.users).select(userColumns).whereRaw('lower(??) = lower(?)', [users.email, email])).first())
      // MySQL's default collations also ignore accents (`exàmple.com` = `example.com`): only the
      // address itself, letter case aside, is an answer.
      const user = row ? toUser(row) : null
      return user && user.email?.toLowerCase() === email.toLowerCase() ? user : null
    },

    async getUserByAccount(ref) {
      const row = await read(knex(tables.users).select(userColumns.map((column) => `${tables.users}.${column}`)))
        .join(tables.accounts, `${tables.accounts}.${accounts.userId}`, `${tables.users}.${users.id}`)
        .where({
          [`${tables.accounts}.${accounts.provider}`]: ref.provider,
          [`${tables.accounts}.${accounts.providerAccountId}`]: ref.providerAccountId,
        })
        .first()
      return row ? toUser(row) : null
    },

    async updateUser({ id, ...changes }) {
      reportDropped('updateUser', changes)
      const changed = values(changes, userNames)
      if (Object.keys(changed).length > 0) await knex(tables.users).update(changed).where({ [users.id]: id })
      const row = await selectUser({ [users.id]: id })
      if (!row) throw new Error(`updateUser: there is no user with id "${id}".`)
      return toUser(row)
    },

    async deleteUser(id) {
      // Explicit deletes as well as the schema's cascade: SQLite enforces foreign keys only when
      // the connection enables them (better-sqlite3 does by default, sqlite3 does not).
      // Asked before the transaction: SQLite's pool has one connection, which the transaction holds.
      const withAuthenticators = await authenticatorTableExists()
      const withPasswords = await passwordTableExists()
      const withTwoFactor = await twoFactorTablesExist()
      return knex.transaction(async (trx) => {
        const row = await read(trx(tables.users).select(userColumns).where({ [users.id]: id })).first()
        if (!row) return null
        await trx(tables.sessions).where({ [sessions.userId]: id }).del()
        await trx(tables.accounts).where({ [accounts.userId]: id }).del()
        if (withAuthenticators) await trx(tables.authenticators).where({ [authenticators.userId]: id }).del()
        if (withPasswords) await trx(tables.passwords).where({ [passwords.userId]: id }).del()
        if (withTwoFactor) {
          await trx(tables.recoveryCodes).where(whereRecoveryCodes(id)).del()
          await trx(tables.twoFactors).where(whereTwoFactor(id)).del()
        }
        await trx(tables.users).where({ [users.id]: id }).del()
        return toUser(row)
      })
    },

    async linkAccount(account) {
      const linked = toAccount(columnsOf(pick(account, ACCOUNT_FIELDS), accounts))
      await knex(tables.accounts).insert({ [accounts.id]: randomUUID(), ...values(linked, accounts) })
      return linked
    },

    async unlinkAccount(ref, options = {}) {
      const { unlessLastOf, countedProviders } = options
      if (unlessLastOf === undefined) {
        const row = await knex(tables.accounts).select().where(accountWhere(ref)).first()
        if (!row) return null
        await knex(tables.accounts).where(accountWhere(ref)).del()
        return toAccount(row)
      }
      // The user's accounts are locked (PostgreSQL, MySQL) while they are counted and one is
      // deleted, so two concurrent unlinks of the last two cannot both pass. SQLite runs one write
      // transaction at a time.
      return knex.transaction(async (trx) => {
        const query = trx(tables.accounts).select().where({ [accounts.userId]: unlessLastOf })
        const rows = await (knex.client.dialect === 'postgresql' || knex.client.dialect === 'mysql' ? query.forUpdate() : query)
        const row = rows.find((candidate) => candidate[accounts.provider] === ref.provider && String(candidate[accounts.providerAccountId]) === ref.providerAccountId)
        const others = rows.filter((other) => other !== row && (!countedProviders || countedProviders.includes(other[accounts.provider])))
        if (!row || others.length === 0) return null
        await trx(tables.accounts).where(accountWhere(ref)).del()
        return toAccount(row)
      })
    },

    async getAccountsByUserId(userId) {
      const rows = await knex(tables.accounts).select().where({ [accounts.userId]: userId })
      return rows.map(toAccount)
    },

    async updateAccount({ provider, providerAccountId, ...changes }, options = {}) {
      const where = accountWhere({ provider, providerAccountId })
      const changed = values(pick(changes, ACCOUNT_TOKEN_FIELDS), accounts)
      // One UPDATE whose WHERE holds the expected values: the database makes the compare-and-set
      // atomic, and the count says whether it matched (mysql2 counts matched rows, not changed ones).
      const query = knex(tables.accounts).where(where)
      for (const [field, value] of Object.entries(pick(options.expect ?? {}, ACCOUNT_TOKEN_FIELDS))) {
        if (value === null) query.whereNull(accounts[field as keyof typeof accounts])
        else if (value !== undefined) query.where(accounts[field as keyof typeof accounts], value as string | number)
      }
      if (Object.keys(changed).length === 0) {
        const row = await query.select().first()
        return row ? toAccount(row) : null
      }
      if ((await query.update(changed)) === 0) return null
      const row = await knex(tables.accounts).select().where(where).first()
      return row ? toAccount(row) : null
    },

    async createSession({ id, sessionToken, userId, expires, ...details }) {
      const session: AdapterSession = { id: id ?? randomUUID(), sessionToken, userId, expires }
      await knex(tables.sessions).insert(await sessionValues({ ...pick(details, SESSION_DETAIL_FIELDS), ...session }))
      return session
    },

    async getSessionAndUser(sessionToken) {
      const query = knex.raw(sessionJoinSql(), [sessionToken, 1])
      // Raw queries take options as builders do (Knex's types leave the method out).
      const row = firstRow(await (utcText ? (query as unknown as { options(options: object): typeof query }).options({ dateStrings: true }) : query))
      return row ? { session: toSession(row, 's_'), user: toUser(row, 'u_') } : null
    },

    async updateSession({ sessionToken, ...changes }) {
      const changed = await sessionValues(pick(changes, ['userId', 'expires', 'lastSeenAt']))
      const where = { [sessions.sessionToken]: sessionToken }
      if (Object.keys(changed).length > 0) {
        const updated = await knex(tables.sessions).update(changed).where(where)
        if (updated === 0) return null
      }
      const row = await read(knex(tables.sessions).select(sessionColumns).where(where)).first()
      return row ? toSession(row) : null
    },

    async deleteSession(sessionToken) {
      const where = { [sessions.sessionToken]: sessionToken }
      const row = await read(knex(tables.sessions).select(sessionColumns).where(where)).first()
      if (!row) return null
      await knex(tables.sessions).where(where).del()
      return toSession(row)
    },

    async listSessionsByUserId(userId) {
      const columns = (await sessionDetailsExist()) ? [...sessionColumns, ...detailColumns] : sessionColumns
      const rows = (await read(knex(tables.sessions).select(columns).where({ [sessions.userId]: userId }))) as Row[]
      return rows.map(withDetails)
    },

    async deleteSessionsByUserId(userId, which) {
      const columns = (await sessionDetailsExist()) ? [...sessionColumns, ...detailColumns] : sessionColumns
      return knex.transaction(async (trx) => {
        const selection = () => {
          const query = trx(tables.sessions).where({ [sessions.userId]: userId })
          if ('only' in which) query.andWhere(sessions.id, which.only)
          else if (which.except !== undefined) query.andWhereNot(sessions.id, which.except)
          return query
        }
        const rows = (await read(selection().select(columns))) as Row[]
        if (rows.length > 0) await selection().del()
        return rows.map(withDetails)
      })
    },

    async createVerificationToken(token) {
      const created: VerificationToken = { identifier: token.identifier, token: token.token, expires: token.expires }
      await knex(tables.verificationTokens).insert(values(created, verificationTokens))
      return created
    },

    async useVerificationToken({ identifier, token }) {
      const where = { [verificationTokens.identifier]: identifier, [verificationTokens.token]: token }
      const row = await read(knex(tables.verificationTokens).select().where(where)).first()
      if (!row) return null
      // Single use without a lock: of concurrent callers that all read the row, only the one whose
      // DELETE removed it gets the token.
      const deleted = await knex(tables.verificationTokens).where(where).del()
      return deleted === 1 ? toToken(row) : null
    },

    async getAccount(providerAccountId, provider) {
      const row = await knex(tables.accounts).select().where(accountWhere({ provider, providerAccountId })).first()
      return row ? toAccount(row) : null
    },

    async createAuthenticator(authenticator) {
      const created: AdapterAuthenticator = {
        credentialID: authenticator.credentialID,
        userId: authenticator.userId,
        providerAccountId: authenticator.providerAccountId,
        credentialPublicKey: authenticator.credentialPublicKey,
        counter: authenticator.counter,
        credentialDeviceType: authenticator.credentialDeviceType,
        credentialBackedUp: authenticator.credentialBackedUp,
        transports: authenticator.transports ?? null,
      }
      await knex(tables.authenticators).insert(values(created, authenticators))
      return created
    },

    async getAuthenticator(credentialID) {
      const row = await selectAuthenticator(credentialID)
      return row ? toAuthenticator(row) : null
    },

    async listAuthenticatorsByUserId(userId) {
      const rows = await knex(tables.authenticators).select().where({ [authenticators.userId]: userId })
      return rows.map(toAuthenticator)
    },

    // Two signatures (Auth.js's, and the compare-and-set's): declared on the instance type.
    updateAuthenticatorCounter: (async (credentialID: string, newCounter: number, options?: { expect?: number | undefined }) => {
      const expect = options?.expect
      const query = knex(tables.authenticators).update({ [authenticators.counter]: newCounter }).where({ [authenticators.credentialID]: credentialID })
      // The expected counter in the WHERE: the database makes the compare-and-set atomic, and the
      // count says whether it matched (mysql2 counts matched rows, not changed ones).
      if (expect !== undefined) query.where(authenticators.counter, expect)
      const updated = await query
      if (updated === 0) {
        if (expect !== undefined) return null
        // Auth.js's contract: an unknown credential is an error here, not null.
        throw new Error('updateAuthenticatorCounter: there is no authenticator with this credentialID.')
      }
      const row = await selectAuthenticator(credentialID)
      if (!row) {
        if (expect !== undefined) return null
        throw new Error('updateAuthenticatorCounter: the authenticator was deleted meanwhile.')
      }
      return toAuthenticator(row)
    }) as KnexAdapterInstance['updateAuthenticatorCounter'],

    async deleteAuthenticator(credentialID) {
      const row = await selectAuthenticator(credentialID)
      if (!row) return null
      const deleted = await knex(tables.authenticators).where({ [authenticators.credentialID]: credentialID }).del()
      return deleted > 0 ? toAuthenticator(row) : null
    },

    async getUserPassword(userId) {
      const row = await knex(tables.passwords).select(passwords.hash).where({ [passwords.userId]: userId }).first()
      return row ? String(row[passwords.hash]) : null
    },

    async setUserPassword(userId, hash) {
      const row = values({ userId, hash, updatedAt: new Date(Date.now()) }, passwords)
      // One statement on every dialect: insert, or replace the user's row.
      await knex(tables.passwords).insert(row).onConflict(passwords.userId).merge([passwords.hash, passwords.updatedAt])
    },

    async deleteUserPassword(userId) {
      return (await knex(tables.passwords).where({ [passwords.userId]: userId }).del()) > 0
    },

    async getTwoFactor(userId) {
      // One query, the count a subquery: it runs at every second-factor sign-in.
      const codes = knex(tables.recoveryCodes).count('*').where(whereRecoveryCodes(userId)).as(RECOVERY_CODE_COUNT)
      const columns = [twoFactors.userId, twoFactors.secret, twoFactors.enabledAt, twoFactors.lastUsedStep]
      const row = await read(knex(tables.twoFactors).select(...columns, codes).where(whereTwoFactor(userId))).first()
      if (!row) return null
      const lastUsedStep = row[twoFactors.lastUsedStep]
      return {
        userId: String(row[twoFactors.userId]),
        secret: String(row[twoFactors.secret]),
        enabledAt: nullableDate(row[twoFactors.enabledAt]),
        // pg returns bigint (and count) as a string; a time step fits a number exactly.
        lastUsedStep: lastUsedStep === null ? null : Number(lastUsedStep),
        recoveryCodes: Number(row[RECOVERY_CODE_COUNT]),
      }
    },

    async startTwoFactor(userId, secret) {
      const replacement = values({ secret, updatedAt: new Date(Date.now()) }, twoFactors)
      // Insert a row if there is none, then replace the secret only while the row is pending: that
      // UPDATE's WHERE never matches a confirmed row (even one confirmed a moment ago), and its count
      // is the answer (mysql2 counts matched rows, so a row inserted just now counts).
      return knex.transaction(async (trx) => {
        const insert = trx(tables.twoFactors).insert({ ...whereTwoFactor(userId), ...replacement }).onConflict(twoFactors.userId)
        // Not Knex's ignore() on MySQL/MariaDB: INSERT IGNORE would also let a bad user id or an over-long value pass.
        await (knex.client.dialect === 'mysql' ? insert.merge([twoFactors.userId]) : insert.ignore())
        const updated = await trx(tables.twoFactors).update(replacement).where(whereTwoFactor(userId)).whereNull(twoFactors.enabledAt)
        return updated === 1
      })
    },

    async enableTwoFactor(userId, { secret, step, enabledAt, recoveryCodes: codeHashes }) {
      checkTimeStep('enableTwoFactor', step)
      return knex.transaction(async (trx) => {
        // The secret in the WHERE: an enrolment replaced meanwhile by a newer one, or confirmed by a
        // concurrent request, matches nothing, and nothing changes.
        const updated = await trx(tables.twoFactors)
          .update(values({ enabledAt, lastUsedStep: step, updatedAt: enabledAt }, twoFactors))
          .where({ ...whereTwoFactor(userId), [twoFactors.secret]: secret })
          .whereNull(twoFactors.enabledAt)
        if (updated !== 1) return false
        await replaceRecoveryCodes(trx, userId, codeHashes)
        return true
      })
    },

    async useTwoFactorStep(userId, step) {
      checkTimeStep('useTwoFactorStep', step)
      // One conditional UPDATE: of concurrent calls with the same step the database lets one match;
      // the others then find lastUsedStep = step and change nothing. A pending enrolment never matches.
      const updated = await knex(tables.twoFactors)
        .update({ [twoFactors.lastUsedStep]: step })
        .where(whereTwoFactor(userId))
        .whereNotNull(twoFactors.enabledAt)
        .andWhere((query) => query.whereNull(twoFactors.lastUsedStep).orWhere(twoFactors.lastUsedStep, '<', step))
      return updated === 1
    },

    async useRecoveryCode(userId, codeHash) {
      // Single use without a lock: of concurrent callers, only the one whose DELETE removed the row gets true.
      const deleted = await knex(tables.recoveryCodes).where({ ...whereRecoveryCodes(userId), [recoveryCodes.codeHash]: codeHash }).del()
      return deleted === 1
    },

    async setRecoveryCodes(userId, codeHashes) {
      await knex.transaction((trx) => replaceRecoveryCodes(trx, userId, codeHashes))
    },

    async deleteTwoFactor(userId) {
      return knex.transaction(async (trx) => {
        await trx(tables.recoveryCodes).where(whereRecoveryCodes(userId)).del()
        return (await trx(tables.twoFactors).where(whereTwoFactor(userId)).del()) === 1
      })
    },

    async resealTwoFactor(userId, { from, to }) {
      // `from` in the WHERE: a key reset or replaced meanwhile matches nothing, and is not overwritten.
      const updated = await knex(tables.twoFactors)
        .update(values({ secret: to, updatedAt: new Date(Date.now()) }, twoFactors))
        .where({ ...whereTwoFactor(userId), [twoFactors.secret]: from })
      return updated === 1
    },

    async prune(options = {}) {
      const batchSize = batchSizeOf(options)
      const now = options.now ?? new Date()
      if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError('prune: now must be a valid Date.')
      // The instant in the columns' stored form (UTC text on MySQL/MariaDB, see `utcText`).
      const cutoff = utcText ? toUtcText(now) : now
      return withPruneLock(knex, adapterPruneLock(tables), async (connection) => ({
        sessions: await deleteExpired(knex, connection, { table: tables.sessions, key: sessions.id, expires: sessions.expires, cutoff }, batchSize, options.signal),
        verificationTokens: await deleteExpired(
          knex,
          connection,
          { table: tables.verificationTokens, key: verificationTokens.token, expires: verificationTokens.expires, cutoff },
          batchSize,
          options.signal,
        ),
      }))
    },
  }
}

/**
 * `userFields`, checked: field → column, none of them a built-in field or column.
 *
 * @throws TypeError for a field that is not a valid name, a column that is empty, or a clash.
 */
function resolveUserFields(option: Readonly<Record<string, string>> | undefined, users: object): Readonly<Record<string, string>> {
  if (option === undefined) return {}
  if (!option || typeof option !== 'object' || Array.isArray(option)) {
    throw new TypeError('KnexAdapter userFields must be an object of field name → column name, e.g. { role: "role" }.')
  }
  const columns = new Set<string>(Object.values(users))
  const resolved: Record<string, string> = {}
  for (const [field, column] of Object.entries(option)) {
    if (Object.hasOwn(users, field)) throw new TypeError(`KnexAdapter userFields: "${field}" is a built-in user field; rename its column with naming.users instead.`)
    if (typeof column !== 'string' || column.length === 0) throw new TypeError(`KnexAdapter userFields.${field} must be a non-empty column name.`)
    if (columns.has(column)) throw new TypeError(`KnexAdapter userFields.${field}: the column "${column}" is already used by another user field.`)
    columns.add(column)
    resolved[field] = column
  }
  return Object.freeze(resolved)
}

/** `record`'s defined fields, keyed by their column names. */
function columnsOf(record: object, names: object): Row {
  const row: Row = {}
  for (const [field, value] of Object.entries(record)) {
    if (value !== undefined && Object.hasOwn(names, field)) row[(names as Record<string, string>)[field]!] = value
  }
  return row
}

/** The first row of a raw select's result, whatever the driver's shape (rows, `{ rows }`, `[rows, fields]`). */
function firstRow(result: unknown): Row | undefined {
  const rows = Array.isArray(result) ? (Array.isArray(result[0]) ? result[0] : result) : (result as { rows?: unknown[] }).rows
  return (rows?.[0] as Row | undefined) ?? undefined
}

/**
 * Checks a TOTP time step (a whole number of 30-second periods since the epoch) before it reaches SQL.
 *
 * @throws TypeError for anything but a non-negative safe integer.
 */
function checkTimeStep(method: string, step: unknown): void {
  if (!Number.isSafeInteger(step) || (step as number) < 0) throw new TypeError(`${method}: step must be a non-negative integer (an RFC 6238 time step).`)
}

function pick<T extends object, K extends string>(record: T, fields: readonly K[]): Partial<Record<K, unknown>> {
  const picked: Partial<Record<K, unknown>> = {}
  for (const field of fields) if (field in record) picked[field] = (record as Record<string, unknown>)[field]
  return picked
}

function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value)
}

function nullableDate(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value)
}

/** `2031-05-06 07:08:09.123`: a UTC instant as MySQL's DATETIME(3) text. */
function toUtcText(date: Date): string {
  return date.toISOString().slice(0, 23).replace('T', ' ')
}

/**
 * A date column's value as a `Date`: PostgreSQL's driver returns `Date`s, MySQL's UTC text (see
 * `utcText`), Knex stores `Date`s in SQLite as milliseconds, and other tools may write ISO strings.
 */
function toDate(value: unknown): Date {
  if (value instanceof Date) return value
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value))
  const text = String(value)
  if (/^\d+$/.test(text)) return new Date(Number(text))
  // SQLite's CURRENT_TIMESTAMP form ("2026-01-02 03:04:05") is UTC without saying so.
  const iso = text.includes('T') ? text : text.replace(' ', 'T')
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`)
}

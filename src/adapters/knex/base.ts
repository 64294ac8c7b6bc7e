/**
 * The Knex adapter's base: Auth.js's Adapter set (users, accounts, sessions, verification tokens),
 * which every instance has whatever features the app uses. Each feature's methods live beside the
 * feature (src/features/<name>/knex.ts); src/adapters/knex/index.ts composes them with these.
 *
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
  AdapterSession,
  AdapterUser,
  NewAdapterAccount,
  NewAdapterUser,
  ProviderType,
  SessionUserOptions,
  VerificationToken,
} from '../../types.js'
import type { KnexNaming, KnexNamingOption } from './naming.js'
import { columnsOf, firstRow, nullableDate, nullableString, pick, toDate, toUtcText, type Row, type RowCodec, type UserRows } from './rows.js'

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

type BaseMethod =
  | 'createUser'
  | 'getUser'
  | 'getUserByEmail'
  | 'getUserByAccount'
  | 'updateUser'
  | 'deleteUser'
  | 'linkAccount'
  | 'unlinkAccount'
  | 'getAccountsByUserId'
  | 'updateAccount'
  | 'createSession'
  | 'getSessionAndUser'
  | 'updateSession'
  | 'deleteSession'
  | 'listSessionsByUserId'
  | 'deleteSessionsByUserId'
  | 'createVerificationToken'
  | 'useVerificationToken'
  | 'getAccount'
  | 'getSessionConfirmation'

/**
 * Whether `column` of `table` exists (the migration that adds it has run): asked until it does, at
 * most once a minute, then never again. The table is asked first: on MySQL/MariaDB `hasColumn`
 * (`show columns from`) fails for a table that does not exist, where SQLite and PostgreSQL answer false.
 */
export function columnCheck(knex: Knex, table: string, column: string): () => Promise<boolean> {
  let found = false
  let askedAt = 0
  return async () => {
    if (found || Date.now() - askedAt < 60_000) return found
    askedAt = Date.now()
    return (found = (await knex.schema.hasTable(table)) && (await knex.schema.hasColumn(table, column)))
  }
}

/** `KnexAdapter`'s base methods, with their exact results: Auth.js's Adapter set, and the listing and ending of a user's sessions. */
export interface KnexBaseMethods extends Pick<Adapter, BaseMethod> {
  createUser(user: NewAdapterUser): Promise<AdapterUser>
  getUser(id: string): Promise<AdapterUser | null>
  getUserByEmail(email: string): Promise<AdapterUser | null>
  getUserByAccount(account: AccountReference): Promise<AdapterUser | null>
  updateUser(user: Partial<AdapterUser> & Pick<AdapterUser, 'id'>): Promise<AdapterUser>
  deleteUser(id: string, options?: { markedBefore?: Date | undefined }): Promise<AdapterUser | null>
  linkAccount(account: NewAdapterAccount): Promise<AdapterAccount>
  unlinkAccount(account: AccountReference, options?: { unlessLastOf?: string; countedProviders?: readonly string[] | undefined }): Promise<AdapterAccount | null>
  getAccountsByUserId(userId: string): Promise<AdapterAccount[]>
  updateAccount(account: AccountReference & Partial<AccountTokenFields>, options?: { expect?: Partial<AccountTokenFields> }): Promise<AdapterAccount | null>
  createSession(session: AdapterSession): Promise<AdapterSession>
  getSessionAndUser(sessionToken: string, options?: SessionUserOptions): Promise<{ session: AdapterSession; user: AdapterUser } | null>
  updateSession(session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>): Promise<AdapterSession | null>
  deleteSession(sessionToken: string): Promise<AdapterSession | null>
  listSessionsByUserId(userId: string): Promise<AdapterSession[]>
  deleteSessionsByUserId(userId: string, which: { only: string } | { except?: string | undefined }): Promise<AdapterSession[]>
  createVerificationToken(token: VerificationToken): Promise<VerificationToken>
  useVerificationToken(params: { identifier: string; token: string }): Promise<VerificationToken | null>
  getAccount(providerAccountId: string, provider: string): Promise<AdapterAccount | null>
  getSessionConfirmation(sessionToken: string): Promise<Pick<AdapterSession, 'createdAt' | 'confirmedAt' | 'confirmedWith'> | null>
}

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
/** The ninth migration's: the session's last confirmation, likewise used once they exist. */
const SESSION_CONFIRMATION_FIELDS = ['confirmedAt', 'confirmedWith'] as const
const ACCOUNT_TOKEN_FIELDS = ['refresh_token', 'access_token', 'expires_at', 'token_type', 'scope', 'id_token', 'session_state'] as const

// Long: the adapter is Auth.js's shape, an object of ~20 short methods closing over one connection
// and one naming; each method is read on its own, and splitting the object would only thread both
// through every one of them.
/**
 * The base methods on `knex`'s users, accounts, sessions and verification tokens tables. Ids are
 * UUIDs generated here, so every database behaves the same.
 *
 * @param userRows The features' rows of a user, deleted with the user by `deleteUser`.
 * @throws TypeError when `options.userFields` is invalid.
 */
export function knexBaseMethods(
  knex: Knex,
  naming: Readonly<KnexNaming>,
  { read, readRaw, values, utcText }: RowCodec,
  options: Pick<KnexAdapterOptions, 'userFields' | 'logger'>,
  userRows: readonly UserRows[],
): KnexBaseMethods {
  const { tables, users, accounts, sessions, verificationTokens } = naming
  const extraUserFields = resolveUserFields(options.userFields, users)
  // Every user field the adapter stores, built-in and the app's own, with its column.
  // The grace period's mark (`deletedAt`) is the account wing's (its knex.ts): no user read selects it.
  // Nor the roles (the roles wing's, twelfth migration): only the session join asks for them (`with`).
  // Nor a ban (the admin wing's, fourteenth migration): the admin wing and the API key lookup read it.
  const { deletedAt, roles, bannedAt: _bannedAt, banReason: _banReason, banExpiresAt: _banExpiresAt, ...userBase } = users
  const userNames: Readonly<Record<string, string>> = { ...userBase, ...extraUserFields }
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
  // Whether the fifth and the ninth migrations have run.
  const sessionDetailsExist = columnCheck(knex, tables.sessions, sessions.userAgent)
  const confirmationExists = columnCheck(knex, tables.sessions, sessions.confirmedWith)
  const sessionValues = async (session: object): Promise<Row> => {
    const fields: string[] = [...SESSION_FIELDS]
    if (await sessionDetailsExist()) fields.push(...SESSION_DETAIL_FIELDS)
    if (await confirmationExists()) fields.push(...SESSION_CONFIRMATION_FIELDS)
    return values(pick(session, fields), sessions)
  }
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
  // The same with what `{ with }` asks (the roles, a session's impersonator), by what it asks.
  const joinSqlWith = new Map<string, string>()
  const buildJoinSql = (columns: readonly string[], join?: (query: Knex.QueryBuilder) => void): string => {
    const query = knex(tables.sessions).select(columns).join(tables.users, `${tables.users}.${users.id}`, `${tables.sessions}.${sessions.userId}`)
    join?.(query)
    return query.where(`${tables.sessions}.${sessions.sessionToken}`, '').limit(1).toSQL().sql
  }
  const sessionJoinSql = (): string => (joinSql ??= buildJoinSql(joinColumns))
  // With the roles option on (`with: ['roles']`): the twelfth migration's column joins the same query.
  const rolesExist = columnCheck(knex, tables.users, roles)
  // With impersonation on (`with: ['impersonatedBy']`): the fifteenth migration's column. Before it
  // no session can have an impersonator (createSession needs the column to start one).
  const impersonatorExists = columnCheck(knex, tables.sessions, sessions.impersonatedBy)
  // With organizations on (`with: ['activeOrganization']`): the organizations migration's column of
  // the sessions table, and the member's roles in that organization (none once they are removed).
  const activeOrganizationExists = columnCheck(knex, tables.sessions, sessions.activeOrganizationId)
  const assertActiveOrganization = async (): Promise<void> => {
    if (!(await activeOrganizationExists())) throw new Error(`The organizations option needs the organizations migration (20270120000000_portcullis_organizations.js): the ${tables.sessions} table has no ${sessions.activeOrganizationId} column. Run the package's migrations.`)
  }
  const sessionJoinSqlWith = async (withRoles: boolean, withImpersonator: boolean, withOrganization: boolean): Promise<string> => {
    const key = `${withRoles}:${withImpersonator}:${withOrganization}`
    const cached = joinSqlWith.get(key)
    if (cached) return cached
    const columns = [...joinColumns]
    if (withRoles) {
      if (!(await rolesExist())) throw new Error(`The roles option needs the twelfth migration (20261231000000_portcullis_roles.js): the ${tables.users} table has no ${roles} column. Run the package's migrations.`)
      columns.push(`${tables.users}.${roles} as u_${roles}`)
    }
    if (withImpersonator && (await impersonatorExists())) columns.push(`${tables.sessions}.${sessions.impersonatedBy} as s_${sessions.impersonatedBy}`)
    const { members } = naming
    if (withOrganization) {
      await assertActiveOrganization()
      columns.push(`${tables.sessions}.${sessions.activeOrganizationId} as s_${sessions.activeOrganizationId}`, `${tables.members}.${members.role} as m_${members.role}`)
    }
    const sql = buildJoinSql(
      columns,
      withOrganization
        ? (query) =>
            query.leftJoin(tables.members, (on) =>
              on.on(`${tables.members}.${members.organizationId}`, '=', `${tables.sessions}.${sessions.activeOrganizationId}`).andOn(`${tables.members}.${members.userId}`, '=', `${tables.sessions}.${sessions.userId}`),
            )
        : undefined,
    )
    joinSqlWith.set(key, sql)
    return sql
  }
  /**
   * The user row `deleteUser` deletes. With `markedBefore`, only while it is marked deleted since
   * before then, locked until the transaction ends: a restore (which clears the mark) either commits
   * first, and the row is not found, or waits and finds no row to restore.
   */
  const userToDelete = (trx: Knex.Transaction, id: string, markedBefore: Date | undefined): Knex.QueryBuilder => {
    const query = trx(tables.users).select(userColumns).where({ [users.id]: id })
    if (markedBefore === undefined) return query
    if (!(markedBefore instanceof Date) || Number.isNaN(markedBefore.getTime())) throw new TypeError('deleteUser: markedBefore must be a valid Date.')
    query.whereNotNull(deletedAt).andWhere(deletedAt, '<', utcText ? toUtcText(markedBefore) : markedBefore)
    // SQLite has no row locks: its writers take turns on the whole database.
    return knex.client.dialect === 'postgresql' || knex.client.dialect === 'mysql' ? query.forUpdate() : query
  }
  const selectUser = (where: Row) => read(knex(tables.users).select(userColumns).where(where)).first()
  const accountWhere = (ref: AccountReference): Row => ({ [accounts.provider]: ref.provider, [accounts.providerAccountId]: ref.providerAccountId })
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

    async deleteUser(id, options = {}) {
      // Explicit deletes as well as the schema's cascade: SQLite enforces foreign keys only when
      // the connection enables them (better-sqlite3 does by default, sqlite3 does not).
      // The features' tables are asked before the transaction: SQLite's pool has one connection,
      // which the transaction holds.
      const present: UserRows[] = []
      for (const rows of userRows) if (await rows.exist()) present.push(rows)
      return knex.transaction(async (trx) => {
        const row = await read(userToDelete(trx, id, options.markedBefore)).first()
        if (!row) return null
        await trx(tables.sessions).where({ [sessions.userId]: id }).del()
        await trx(tables.accounts).where({ [accounts.userId]: id }).del()
        for (const rows of present) await rows.remove(trx, id)
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

    async createSession({ id, sessionToken, userId, expires, impersonatedBy, activeOrganizationId, ...details }) {
      const session: AdapterSession = { id: id ?? randomUUID(), sessionToken, userId, expires }
      const row = await sessionValues({ ...pick(details, [...SESSION_DETAIL_FIELDS, ...SESSION_CONFIRMATION_FIELDS]), ...session })
      if (activeOrganizationId) {
        await assertActiveOrganization()
        row[sessions.activeOrganizationId] = activeOrganizationId
        session.activeOrganizationId = activeOrganizationId
      }
      if (impersonatedBy) {
        if (!(await impersonatorExists())) throw new Error(`Impersonation needs the fifteenth migration (20270112000000_portcullis_impersonation.js): the ${tables.sessions} table has no ${sessions.impersonatedBy} column. Run the package's migrations.`)
        row[sessions.impersonatedBy] = impersonatedBy
        session.impersonatedBy = impersonatedBy
      }
      await knex(tables.sessions).insert(row)
      return session
    },

    async getSessionAndUser(sessionToken, options) {
      const asked = options?.with
      const withRoles = asked?.includes('roles') === true
      const withImpersonator = asked?.includes('impersonatedBy') === true
      const withOrganization = asked?.includes('activeOrganization') === true
      const query = knex.raw(withRoles || withImpersonator || withOrganization ? await sessionJoinSqlWith(withRoles, withImpersonator, withOrganization) : sessionJoinSql(), [sessionToken, 1])
      const row = firstRow(await readRaw(query))
      if (!row) return null
      const user = toUser(row, 'u_')
      if (withRoles) user.roles = nullableString(row[`u_${roles}`])
      const session = toSession(row, 's_')
      if (withImpersonator) {
        const by = nullableString(row[`s_${sessions.impersonatedBy}`])
        if (by) session.impersonatedBy = by
      }
      if (withOrganization) {
        const organizationId = nullableString(row[`s_${sessions.activeOrganizationId}`])
        session.activeOrganizationId = organizationId
        user.activeOrganization = organizationId ? { id: organizationId, roles: nullableString(row[`m_${naming.members.role}`]) } : null
      }
      return { session, user }
    },

    async updateSession({ sessionToken, ...changes }) {
      const changed = await sessionValues(pick(changes, ['userId', 'expires', 'lastSeenAt', ...SESSION_CONFIRMATION_FIELDS]))
      if (changes.activeOrganizationId !== undefined) {
        await assertActiveOrganization()
        changed[sessions.activeOrganizationId] = changes.activeOrganizationId
      }
      const where = { [sessions.sessionToken]: sessionToken }
      if (Object.keys(changed).length > 0) {
        const updated = await knex(tables.sessions).update(changed).where(where)
        if (updated === 0) return null
      }
      const row = await read(knex(tables.sessions).select(sessionColumns).where(where)).first()
      return row ? toSession(row) : null
    },

    async getSessionConfirmation(sessionToken) {
      const columns = [sessions.expires]
      if (await sessionDetailsExist()) columns.push(sessions.createdAt)
      if (await confirmationExists()) columns.push(sessions.confirmedAt, sessions.confirmedWith)
      const row = (await read(knex(tables.sessions).select(columns).where({ [sessions.sessionToken]: sessionToken })).first()) as Row | undefined
      if (!row) return null
      return { createdAt: nullableDate(row[sessions.createdAt]), confirmedAt: nullableDate(row[sessions.confirmedAt]), confirmedWith: nullableString(row[sessions.confirmedWith]) }
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

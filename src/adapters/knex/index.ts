/**
 * `KnexAdapter`: users, accounts, sessions and verification tokens in SQLite, PostgreSQL or
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
  VerificationToken,
} from '../../types.js'
import { resolveNaming, type KnexNamingOption } from './naming.js'

export { defaultNaming, snakeCaseNaming, resolveNaming } from './naming.js'
export type * from './naming.js'
export { migrationSource, defaultMigration, type MigrationSourceOptions } from './migrations.js'

/** Options of `KnexAdapter`. */
export interface KnexAdapterOptions {
  /** Table and column names: `default`, `snake_case`, or overrides. Use the same in `migrationSource`. */
  naming?: KnexNamingOption
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
  unlinkAccount(account: AccountReference, options?: { unlessLastOf?: string }): Promise<AdapterAccount | null>
  getAccountsByUserId(userId: string): Promise<AdapterAccount[]>
  updateAccount(account: AccountReference & Partial<AccountTokenFields>, options?: { expect?: Partial<AccountTokenFields> }): Promise<AdapterAccount | null>
  createSession(session: AdapterSession): Promise<AdapterSession>
  getSessionAndUser(sessionToken: string): Promise<{ session: AdapterSession; user: AdapterUser } | null>
  updateSession(session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>): Promise<AdapterSession | null>
  deleteSession(sessionToken: string): Promise<AdapterSession | null>
  createVerificationToken(token: VerificationToken): Promise<VerificationToken>
  useVerificationToken(params: { identifier: string; token: string }): Promise<VerificationToken | null>
}

type Row = Record<string, unknown>

const USER_FIELDS = ['id', 'name', 'email', 'emailVerified', 'image'] as const
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
const SESSION_FIELDS = ['sessionToken', 'userId', 'expires'] as const
const ACCOUNT_TOKEN_FIELDS = ['refresh_token', 'access_token', 'expires_at', 'token_type', 'scope', 'id_token', 'session_state'] as const

// Long: the adapter is Auth.js's shape, an object of ~20 short methods closing over one connection
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
  const { tables, users, accounts, sessions, verificationTokens } = resolveNaming(options.naming)

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
  const userColumns = USER_FIELDS.map((field) => users[field])
  const sessionColumns = SESSION_FIELDS.map((field) => sessions[field])
  const toUser = (row: Row, prefix = ''): AdapterUser => ({
    id: String(row[prefix + users.id]),
    name: nullableString(row[prefix + users.name]),
    email: nullableString(row[prefix + users.email]),
    emailVerified: nullableDate(row[prefix + users.emailVerified]),
    image: nullableString(row[prefix + users.image]),
  })
  const toSession = (row: Row, prefix = ''): AdapterSession => ({
    sessionToken: String(row[prefix + sessions.sessionToken]),
    userId: String(row[prefix + sessions.userId]),
    expires: toDate(row[prefix + sessions.expires]),
  })
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
    ...USER_FIELDS.map((field) => `${tables.users}.${users[field]} as u_${users[field]}`),
  ]

  const selectUser = (where: Row) => read(knex(tables.users).select(userColumns).where(where)).first()
  const accountWhere = (ref: AccountReference): Row => ({ [accounts.provider]: ref.provider, [accounts.providerAccountId]: ref.providerAccountId })

  return {
    async createUser(user) {
      const created: AdapterUser = {
        id: user.id ?? randomUUID(),
        name: user.name ?? null,
        email: user.email ?? null,
        emailVerified: user.emailVerified ?? null,
        image: user.image ?? null,
      }
      await knex(tables.users).insert(values(created, users))
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
      const changed = values(changes, users)
      if (Object.keys(changed).length > 0) await knex(tables.users).update(changed).where({ [users.id]: id })
      const row = await selectUser({ [users.id]: id })
      if (!row) throw new Error(`updateUser: there is no user with id "${id}".`)
      return toUser(row)
    },

    async deleteUser(id) {
      // Explicit deletes as well as the schema's cascade: SQLite enforces foreign keys only when
      // the connection enables them (better-sqlite3 does by default, sqlite3 does not).
      return knex.transaction(async (trx) => {
        const row = await read(trx(tables.users).select(userColumns).where({ [users.id]: id })).first()
        if (!row) return null
        await trx(tables.sessions).where({ [sessions.userId]: id }).del()
        await trx(tables.accounts).where({ [accounts.userId]: id }).del()
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
      const { unlessLastOf } = options
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
        if (!row || rows.length < 2) return null
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

    async createSession({ sessionToken, userId, expires }) {
      const session: AdapterSession = { sessionToken, userId, expires }
      await knex(tables.sessions).insert({ [sessions.id]: randomUUID(), ...values(session, sessions) })
      return session
    },

    async getSessionAndUser(sessionToken) {
      const row = await read(knex(tables.sessions))
        .first(joinColumns)
        .join(tables.users, `${tables.users}.${users.id}`, `${tables.sessions}.${sessions.userId}`)
        .where(`${tables.sessions}.${sessions.sessionToken}`, sessionToken)
      return row ? { session: toSession(row, 's_'), user: toUser(row, 'u_') } : null
    },

    async updateSession({ sessionToken, ...changes }) {
      const changed = values(pick(changes, ['userId', 'expires']), sessions)
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
  }
}

/** `record`'s defined fields, keyed by their column names. */
function columnsOf(record: object, names: object): Row {
  const row: Row = {}
  for (const [field, value] of Object.entries(record)) {
    if (value !== undefined && Object.hasOwn(names, field)) row[(names as Record<string, string>)[field]!] = value
  }
  return row
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

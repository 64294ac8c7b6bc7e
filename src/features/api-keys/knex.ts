/**
 * The Knex adapter's API keys (the eighth migration's table), composed into `KnexAdapter` by
 * src/adapters/knex/index.ts. The lookup is one indexed query on the key's hash joined to its owning
 * user, so a deleted user's keys stop at once (an organization's key: then its organization by id);
 * the writes a request may cause (last use, quota) are conditional UPDATEs.
 */
import type { Knex } from 'knex'
import { columnCheck } from '../../adapters/knex/base.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { firstRow, nullableDate, nullableString, toDate, toUtcText, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter, AdapterUser } from '../../types.js'
import type { AdapterApiKey, ApiKeyOwner } from './types.js'

type ApiKeyMethod = 'createApiKey' | 'getApiKeyByHash' | 'getApiKey' | 'listApiKeys' | 'revokeApiKey' | 'expireApiKey' | 'touchApiKey' | 'useApiKeyQuota'

/** `KnexAdapter`'s API key methods (see `Adapter` for each). */
export interface KnexApiKeyMethods extends Required<Pick<Adapter, ApiKeyMethod>> {}

// The owning user's columns in the lookup's join, under aliases no key column has.
const USER_ALIAS = 'portcullis_owner_'
// Stands for the key hash while the lookup's SQL is built: no SHA-256 hex digest looks like it.
const HASH_PLACE = '(the key hash)'

/** The lookup's SQL for one migration state, with its values, the hash's place among them, and that state. */
interface Lookup {
  readonly sql: string
  readonly bindings: readonly Knex.Value[]
  readonly hashAt: number
  readonly organizations: boolean
  readonly marked: boolean
  readonly bans: boolean
}

const present = (value: unknown): boolean => value !== null && value !== undefined

// Long: eight short methods closing over one connection and one naming, each read on its own.
/** The API key methods on `knex`'s API keys table. */
export function knexApiKeyMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, readRaw, values, utcText }: RowCodec): KnexApiKeyMethods {
  const { tables, apiKeys: c, users } = naming
  // A date in the columns' stored form (UTC text on MySQL/MariaDB, see `RowCodec.utcText`).
  const at = (date: Date): Knex.Value => (utcText ? toUtcText(date) : date)
  // Whether the eleventh migration has run: a user marked deleted (its grace period) has no keys that work.
  const markExists = columnCheck(knex, tables.users, users.deletedAt)
  const banExists = columnCheck(knex, tables.users, users.bannedAt)
  // Whether the organizations migration has run: only then can a key belong to an organization. Asked
  // at most once a minute until it has: an app that never runs it does not pay a schema query per lookup.
  const organizationsExist = columnCheck(knex, tables.organizations, naming.organizations.id)
  const ownerWhere = (owner: ApiKeyOwner): Row => ({ [c.ownerType]: owner.type, [c.ownerId]: owner.id })
  const userColumns = (['id', 'name', 'email', 'emailVerified', 'image'] as const).map((field) => `u.${users[field]} as ${USER_ALIAS}${field}`)
  const toKey = (row: Row): AdapterApiKey => {
    const remaining = row[c.remaining]
    return {
      id: String(row[c.id]),
      keyHash: String(row[c.keyHash]),
      display: String(row[c.display]),
      name: String(row[c.name]),
      owner: { type: String(row[c.ownerType]) as ApiKeyOwner['type'], id: String(row[c.ownerId]) },
      createdBy: nullableString(row[c.createdBy]),
      scopes: JSON.parse(String(row[c.scopes])) as string[],
      metadata: row[c.metadata] === null || row[c.metadata] === undefined ? null : (JSON.parse(String(row[c.metadata])) as Record<string, unknown>),
      createdAt: toDate(row[c.createdAt]),
      expiresAt: nullableDate(row[c.expiresAt]),
      revokedAt: nullableDate(row[c.revokedAt]),
      lastUsedAt: nullableDate(row[c.lastUsedAt]),
      rateLimit: row[c.rateLimitMax] === null || row[c.rateLimitMax] === undefined ? null : { max: Number(row[c.rateLimitMax]), windowSeconds: Number(row[c.rateLimitWindow]) },
      quota:
        remaining === null || remaining === undefined
          ? null
          : {
              remaining: Number(remaining),
              refillAmount: row[c.refillAmount] === null ? undefined : Number(row[c.refillAmount]),
              refillInterval: row[c.refillInterval] === null ? undefined : Number(row[c.refillInterval]),
              lastRefillAt: nullableDate(row[c.lastRefillAt]),
            },
    }
  }
  const toRow = (key: AdapterApiKey): Row =>
    values(
      {
        id: key.id,
        keyHash: key.keyHash,
        display: key.display,
        name: key.name,
        ownerType: key.owner.type,
        ownerId: key.owner.id,
        createdBy: key.createdBy,
        scopes: JSON.stringify(key.scopes),
        metadata: key.metadata === null ? null : JSON.stringify(key.metadata),
        createdAt: key.createdAt,
        expiresAt: key.expiresAt,
        revokedAt: key.revokedAt,
        lastUsedAt: key.lastUsedAt,
        rateLimitMax: key.rateLimit?.max ?? null,
        rateLimitWindow: key.rateLimit?.windowSeconds ?? null,
        remaining: key.quota?.remaining ?? null,
        refillAmount: key.quota?.refillAmount ?? null,
        refillInterval: key.quota?.refillInterval ?? null,
        lastRefillAt: key.quota?.lastRefillAt ?? null,
      },
      c,
    )
  // One query through the unique index on the hash, the key's user joined (a left join: an
  // organization's key has none); whether the owner stands is read from the row (getApiKeyByHash).
  // With the eleventh migration the user's deletion mark, with the fourteenth the ban, in the same row.
  const lookupQuery = (marked: boolean, bans: boolean, keyHash: string): Knex.QueryBuilder => {
    const query = knex(`${tables.apiKeys} as k`)
      .leftJoin(`${tables.users} as u`, (on) => on.on(`u.${users.id}`, `k.${c.ownerId}`).andOn(`k.${c.ownerType}`, knex.raw('?', ['user'])))
      .where(`k.${c.keyHash}`, keyHash)
      .select('k.*', ...userColumns)
    if (marked) query.select(`u.${users.deletedAt} as ${USER_ALIAS}deletedAt`)
    if (bans) query.select(`u.${users.bannedAt} as ${USER_ALIAS}bannedAt`, `u.${users.banExpiresAt} as ${USER_ALIAS}banExpiresAt`)
    return query.first()
  }
  // Every request with a key and no opened-key cache runs the lookup, and a query builder per read
  // costs more than SQLite's whole indexed query: its SQL (with `?` for its values) is built once per
  // migration state, then run raw with the hash in its place among the values.
  const lookups = new Map<string, Lookup>()
  const lookup = async (): Promise<Lookup> => {
    const organizations = await organizationsExist()
    const marked = await markExists()
    const bans = await banExists()
    const state = `${organizations}:${marked}:${bans}`
    let built = lookups.get(state)
    if (!built) {
      const { sql, bindings } = lookupQuery(marked, bans, HASH_PLACE).toSQL()
      const hashAt = bindings.indexOf(HASH_PLACE)
      if (hashAt < 0 || bindings.indexOf(HASH_PLACE, hashAt + 1) >= 0) throw new Error('getApiKeyByHash: the lookup\'s SQL does not hold the key hash once among its values.')
      lookups.set(state, (built = { sql, bindings, hashAt, organizations, marked, bans }))
    }
    return built
  }
  const { organizations: o } = naming
  /** An organization that owns a key, as the key's user (owner.type says so), or null once it is gone. */
  const organizationOf = async (id: string): Promise<AdapterUser | null> => {
    const row = (await read(knex(tables.organizations).where(o.id, id).first(o.id, o.name, o.logo))) as Row | undefined
    return row ? { id: String(row[o.id]), name: nullableString(row[o.name]), email: null, emailVerified: null, image: nullableString(row[o.logo]) } : null
  }

  return {
    async createApiKey(key) {
      await knex(tables.apiKeys).insert(toRow(key))
      return key
    },

    async getApiKeyByHash(keyHash) {
      const { sql, bindings, hashAt, organizations, marked, bans } = await lookup()
      const bound = [...bindings]
      bound[hashAt] = keyHash
      const row = firstRow(await readRaw(knex.raw(sql, bound)))
      if (!row) return null
      if (row[c.ownerType] === 'organization') {
        // An organization's key (only after the organizations migration), while the organization exists:
        // read by its id in a second query. A second join in the first cost every key's read on SQLite
        // about a fifth of the read (bench/README.md); the opened-key cache spares most of these.
        const organization = organizations ? await organizationOf(String(row[c.ownerId])) : null
        return organization && { key: toKey(row), user: organization }
      }
      // A user's key, while its user exists and is not marked deleted (the account's grace period: the
      // keys work again if a sign-in restores it). Any other owner type has no owner.
      if (row[c.ownerType] !== 'user' || !present(row[`${USER_ALIAS}id`]) || (marked && present(row[`${USER_ALIAS}deletedAt`]))) return null
      const user: AdapterUser = {
        id: String(row[`${USER_ALIAS}id`]),
        name: nullableString(row[`${USER_ALIAS}name`]),
        email: nullableString(row[`${USER_ALIAS}email`]),
        emailVerified: nullableDate(row[`${USER_ALIAS}emailVerified`]),
        image: nullableString(row[`${USER_ALIAS}image`]),
      }
      // The owner's ban, in the same row: the read refuses it by name.
      const bannedAt = bans ? nullableDate(row[`${USER_ALIAS}bannedAt`]) : null
      return { key: toKey(row), user, ...(bannedAt && { ownerBan: { bannedAt, expiresAt: nullableDate(row[`${USER_ALIAS}banExpiresAt`]) } }) }
    },

    async getApiKey(id, owner) {
      const row = (await read(knex(tables.apiKeys).where({ [c.id]: id, ...ownerWhere(owner) })).first()) as Row | undefined
      return row ? toKey(row) : null
    },

    async listApiKeys(owner) {
      const rows = (await read(knex(tables.apiKeys).where(ownerWhere(owner)).orderBy(c.createdAt, 'desc').orderBy(c.id))) as Row[]
      return rows.map(toKey)
    },

    async revokeApiKey(id, owner, when) {
      // Expires when revoked too: the prune deletes by the expiry's index.
      const count = await knex(tables.apiKeys)
        .where({ [c.id]: id, ...ownerWhere(owner) })
        .whereNull(c.revokedAt)
        .andWhere((q) => q.whereNull(c.expiresAt).orWhere(c.expiresAt, '>', at(when)))
        .update({ [c.revokedAt]: at(when), [c.expiresAt]: at(when) })
      return count > 0
    },

    async expireApiKey(id, owner, when) {
      const count = await knex(tables.apiKeys)
        .where({ [c.id]: id, ...ownerWhere(owner) })
        .whereNull(c.revokedAt)
        .andWhere((q) => q.whereNull(c.expiresAt).orWhere(c.expiresAt, '>', at(when)))
        .update({ [c.expiresAt]: at(when) })
      return count > 0
    },

    async touchApiKey(id, now, before) {
      // At most once per window per key across every process: the row changes only when its last
      // use is older than `before`, and a request that finds it newer writes nothing.
      await knex(tables.apiKeys)
        .where(c.id, id)
        .andWhere((q) => q.whereNull(c.lastUsedAt).orWhere(c.lastUsedAt, '<', at(before)))
        .update({ [c.lastUsedAt]: at(now) })
    },

    async useApiKeyQuota(id, now) {
      return knex.transaction(async (trx) => {
        // A refill when its interval has passed since the last (or since the key was made): one
        // conditional UPDATE, so of concurrent requests one refills.
        const row = (await read(trx(tables.apiKeys).where(c.id, id).select(c.refillAmount, c.refillInterval, c.lastRefillAt, c.createdAt)).first()) as Row | undefined
        if (!row) return false
        const interval = row[c.refillInterval]
        if (row[c.refillAmount] !== null && interval !== null && interval !== undefined) {
          const since = toDate(row[c.lastRefillAt] ?? row[c.createdAt]).getTime()
          if (now.getTime() - since >= Number(interval) * 1000) {
            const last = row[c.lastRefillAt]
            await trx(tables.apiKeys)
              .where(c.id, id)
              .andWhere((q) => (last === null ? q.whereNull(c.lastRefillAt) : q.where(c.lastRefillAt, last as Knex.Value)))
              .update({ [c.remaining]: row[c.refillAmount] as number, [c.lastRefillAt]: at(now) })
          }
        }
        const used = await trx(tables.apiKeys).where(c.id, id).andWhere(c.remaining, '>', 0).decrement(c.remaining, 1)
        return Number(used) > 0
      })
    },
  }
}

/** The user's keys, deleted with the user by `deleteUser` (the lookup's join refuses them already). */
export function knexApiKeyUserRows(knex: Knex, naming: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, naming.tables.apiKeys, async (trx, userId) => {
    await trx(naming.tables.apiKeys).where({ [naming.apiKeys.ownerType]: 'user', [naming.apiKeys.ownerId]: userId }).del()
  })
}

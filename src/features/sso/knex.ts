/**
 * The Knex adapter's SSO methods (the SSO migration's `SsoConnection`, `SsoDomain` and `SsoReplay`
 * tables), composed into `KnexAdapter` by src/adapters/knex/index.ts. A domain is unique across
 * organizations (the column's unique index decides a race); a used assertion's id is a primary key,
 * so of two processes given one assertion at once, exactly one inserts it.
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { isUniqueViolation, nullableDate, toDate, type Row, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import type { AdapterSsoConnection, AdapterSsoDomain } from './types.js'

type SsoMethod =
  | 'createSsoConnection'
  | 'getSsoConnection'
  | 'listSsoConnections'
  | 'updateSsoConnection'
  | 'deleteSsoConnection'
  | 'createSsoDomain'
  | 'getSsoDomain'
  | 'listSsoDomains'
  | 'verifySsoDomain'
  | 'deleteSsoDomain'
  | 'ssoOnlyOrganizations'
  | 'claimSsoAssertion'
  | 'pruneSsoAssertions'

/** `KnexAdapter`'s SSO methods (see `Adapter` for each). */
export interface KnexSsoMethods extends Required<Pick<Adapter, SsoMethod>> {}

// Long: thirteen short methods closing over one connection and one naming, each read on its own.
/** The SSO methods on `knex`'s connections, domains and replay tables. */
export function knexSsoMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, values }: RowCodec): KnexSsoMethods {
  const { tables, ssoConnections: c, ssoDomains: d, ssoReplays: r, members: m } = naming
  const toConnection = (row: Row): AdapterSsoConnection => ({
    id: String(row[c.id]),
    organizationId: String(row[c.organizationId]),
    type: String(row[c.type]) === 'saml' ? 'saml' : 'oidc',
    name: String(row[c.name]),
    enabled: Boolean(row[c.enabled]),
    ssoOnly: Boolean(row[c.ssoOnly]),
    defaultRole: String(row[c.defaultRole]),
    settings: JSON.parse(String(row[c.settings])) as AdapterSsoConnection['settings'],
    createdAt: toDate(row[c.createdAt]),
    updatedAt: toDate(row[c.updatedAt]),
  })
  const toDomain = (row: Row): AdapterSsoDomain => ({
    id: String(row[d.id]),
    organizationId: String(row[d.organizationId]),
    domain: String(row[d.domain]),
    token: String(row[d.token]),
    verifiedAt: nullableDate(row[d.verifiedAt]),
    verifiedBy: row[d.verifiedBy] === 'dns' || row[d.verifiedBy] === 'admin' ? (row[d.verifiedBy] as 'dns' | 'admin') : null,
    createdAt: toDate(row[d.createdAt]),
  })
  const lockable = knex.client.dialect === 'postgresql' || knex.client.dialect === 'mysql'
  const verifiedElsewhere = async (db: Knex | Knex.Transaction, domain: string, organizationId: string): Promise<boolean> =>
    Boolean(await db(tables.ssoDomains).select(d.id).where({ [d.domain]: domain }).whereNot({ [d.organizationId]: organizationId }).whereNotNull(d.verifiedAt).first())
  const connectionRow = (connection: Partial<AdapterSsoConnection>): Row => values({ ...connection, ...(connection.settings !== undefined && { settings: JSON.stringify(connection.settings) }) }, c)
  const connectionById = async (id: string, db: Knex | Knex.Transaction = knex): Promise<AdapterSsoConnection | null> => {
    const row = (await read(db(tables.ssoConnections).select().where({ [c.id]: id })).first()) as Row | undefined
    return row ? toConnection(row) : null
  }
  const domainBy = async (where: Row): Promise<AdapterSsoDomain | null> => {
    const row = (await read(knex(tables.ssoDomains).select().where(where)).first()) as Row | undefined
    return row ? toDomain(row) : null
  }
  return {
    async createSsoConnection(input) {
      const now = new Date(Date.now())
      const connection: AdapterSsoConnection = { ...input, id: randomUUID(), createdAt: now, updatedAt: now }
      await knex(tables.ssoConnections).insert(connectionRow(connection))
      return connection
    },

    getSsoConnection: (id) => connectionById(id),

    async listSsoConnections(organizationId) {
      return ((await read(knex(tables.ssoConnections).select().where({ [c.organizationId]: organizationId }).orderBy([c.createdAt, c.id]))) as Row[]).map(toConnection)
    },

    async updateSsoConnection(id, changes) {
      const updated = await knex(tables.ssoConnections).update(connectionRow({ ...changes, updatedAt: new Date(Date.now()) })).where({ [c.id]: id })
      return updated === 0 ? null : connectionById(id)
    },

    async deleteSsoConnection(id) {
      return (await knex(tables.ssoConnections).where({ [c.id]: id }).delete()) > 0
    },

    async createSsoDomain(input) {
      const domain: AdapterSsoDomain = { ...input, id: randomUUID(), verifiedAt: null, verifiedBy: null, createdAt: new Date(Date.now()) }
      if (await verifiedElsewhere(knex, input.domain, input.organizationId)) return 'taken'
      try {
        await knex(tables.ssoDomains).insert(values(domain, d))
      } catch (error) {
        if (isUniqueViolation(error)) return 'taken'
        throw error
      }
      return domain
    },

    async getSsoDomain(by) {
      if ('id' in by) return domainBy({ [d.id]: by.id })
      const row = (await read(knex(tables.ssoDomains).select().where({ [d.domain]: by.domain }).whereNotNull(d.verifiedAt)).first()) as Row | undefined
      return row ? toDomain(row) : null
    },

    async listSsoDomains(organizationId) {
      return ((await read(knex(tables.ssoDomains).select().where({ [d.organizationId]: organizationId }).orderBy([d.createdAt, d.id]))) as Row[]).map(toDomain)
    },

    async verifySsoDomain(id, at, by) {
      // In one transaction, the domain's rows locked: of two organizations verifying one domain at once, one does.
      const verified = await knex.transaction(async (trx) => {
        const row = (await read(trx(tables.ssoDomains).select().where({ [d.id]: id })).first()) as Row | undefined
        if (!row) return null
        const domain = String(row[d.domain])
        const rows = trx(tables.ssoDomains).select(d.id).where({ [d.domain]: domain })
        if (lockable) await rows.forUpdate()
        if (await verifiedElsewhere(trx, domain, String(row[d.organizationId]))) return 'taken' as const
        await trx(tables.ssoDomains).update(values({ verifiedAt: at, verifiedBy: by }, d)).where({ [d.id]: id })
        return id
      })
      return verified === null || verified === 'taken' ? verified : domainBy({ [d.id]: id })
    },

    async deleteSsoDomain(id) {
      return (await knex(tables.ssoDomains).where({ [d.id]: id }).delete()) > 0
    },

    async ssoOnlyOrganizations(userId, domain) {
      // One query: the organizations with an enabled SSO-only connection that the user is a member
      // of, or whose verified domain is the address's.
      const bound = knex(tables.ssoConnections)
        .distinct(`${tables.ssoConnections}.${c.organizationId} as organizationId`)
        .where({ [`${tables.ssoConnections}.${c.enabled}`]: true, [`${tables.ssoConnections}.${c.ssoOnly}`]: true })
        .andWhere((where) => {
          if (userId !== null) where.orWhereIn(`${tables.ssoConnections}.${c.organizationId}`, knex(tables.members).select(m.organizationId).where({ [m.userId]: userId }))
          if (domain !== null) where.orWhereIn(`${tables.ssoConnections}.${c.organizationId}`, knex(tables.ssoDomains).select(d.organizationId).where({ [d.domain]: domain }).whereNotNull(d.verifiedAt))
          if (userId === null && domain === null) where.whereRaw('1 = 0')
        })
      return ((await bound) as Array<{ organizationId: string }>).map((row) => String(row.organizationId))
    },

    async claimSsoAssertion(key, expiresAt) {
      try {
        await knex(tables.ssoReplays).insert(values({ key, expiresAt }, r))
        return true
      } catch (error) {
        if (isUniqueViolation(error)) return false
        throw error
      }
    },

    async pruneSsoAssertions(now) {
      return knex(tables.ssoReplays).where(r.expiresAt, '<', values({ expiresAt: now }, r)[r.expiresAt] as Date | string).delete()
    },
  }
}

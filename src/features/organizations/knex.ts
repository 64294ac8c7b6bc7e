/**
 * The Knex adapter's organizations and members (the organizations migration's tables), composed
 * into `KnexAdapter` by src/adapters/knex/index.ts. Creating an organization writes it and its owner
 * in one transaction; a change that could leave an organization without an owner is checked and
 * written in one transaction, the organization's row locked first (PostgreSQL, MySQL/MariaDB; SQLite
 * runs one writing transaction at a time), so two owners demoting each other at once cannot both
 * succeed, and the one that waited is answered `last_owner`, never a deadlock.
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import { columnCheck } from '../../adapters/knex/base.js'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { isUniqueViolation, toDate, nullableString, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import { parseStoredRoles } from '../roles/stored.js'
import type { AdapterMember, AdapterMemberWithUser, AdapterOrganization, MembershipChange } from './types.js'

type OrganizationMethod =
  | 'createOrganization'
  | 'getOrganization'
  | 'updateOrganization'
  | 'deleteOrganization'
  | 'listOrganizationsOfUser'
  | 'addMember'
  | 'getMember'
  | 'listMembers'
  | 'countMembers'
  | 'updateMemberRoles'
  | 'removeMember'

/** `KnexAdapter`'s organization methods (see `Adapter` for each). */
export interface KnexOrganizationMethods extends Required<Pick<Adapter, OrganizationMethod>> {}

const MEMBER_ALIAS = 'portcullis_member_'

// Long: twelve short methods closing over one connection and one naming, each read on its own.
/** The organization methods on `knex`'s organizations, members and sessions tables. */
export function knexOrganizationMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, values }: RowCodec): KnexOrganizationMethods {
  const { tables, organizations: o, members: m, sessions, users, teams, teamMembers, invitations } = naming
  const lockable = knex.client.dialect === 'postgresql' || knex.client.dialect === 'mysql'
  // Whether the API keys' migration has run: an organization's keys go with it.
  const apiKeysExist = columnCheck(knex, tables.apiKeys, naming.apiKeys.ownerId)
  // Whether the SSO migration has run: an organization's connections and domains go with it.
  const ssoExists = columnCheck(knex, tables.ssoConnections, naming.ssoConnections.id)
  const toOrganization = (row: Row): AdapterOrganization => ({
    id: String(row[o.id]),
    name: String(row[o.name]),
    slug: String(row[o.slug]),
    logo: nullableString(row[o.logo]),
    metadata: row[o.metadata] === null || row[o.metadata] === undefined ? null : (JSON.parse(String(row[o.metadata])) as Record<string, unknown>),
    createdAt: toDate(row[o.createdAt]),
  })
  const toMember = (row: Row, prefix = ''): AdapterMember => ({
    id: String(row[prefix + m.id]),
    organizationId: String(row[prefix + m.organizationId]),
    userId: String(row[prefix + m.userId]),
    roles: parseStoredRoles(row[prefix + m.role]) ?? [],
    createdAt: toDate(row[prefix + m.createdAt]),
  })
  const organizationRow = (organization: Partial<AdapterOrganization>): Row =>
    values({ ...organization, ...(organization.metadata !== undefined ? { metadata: organization.metadata === null ? null : JSON.stringify(organization.metadata) } : {}) }, o)
  const memberColumns = Object.values(m).map((column) => `${tables.members}.${column} as ${MEMBER_ALIAS}${column}`)
  /**
   * Locks the organization's row until the transaction ends, first thing: the membership changes of
   * one organization then run one after the other. Locking only the member rows a change reads (its
   * target's, then the others') took them in a different order in two changes that cross (two owners
   * demoting each other): each held the row the other wanted, and the database ended one of them as
   * a deadlock (a 503) instead of answering `last_owner`.
   */
  const lockOrganization = async (trx: Knex.Transaction, organizationId: string): Promise<void> => {
    if (lockable) await trx(tables.organizations).select(o.id).where({ [o.id]: organizationId }).forUpdate()
  }
  /** The member's roles (null: no such member), read after the organization's row is locked. */
  const lockedRoles = async (trx: Knex.Transaction, organizationId: string, userId: string): Promise<string[] | null> => {
    await lockOrganization(trx, organizationId)
    const row = (await trx(tables.members).select(m.role).where({ [m.organizationId]: organizationId, [m.userId]: userId }).first()) as Row | undefined
    return row ? (parseStoredRoles(row[m.role]) ?? []) : null
  }
  /** Whether another member is owner (asked with the organization's row locked: no other change of its members runs meanwhile). */
  const keepsAnOwner = async (trx: Knex.Transaction, organizationId: string, userId: string, ownerRole: string): Promise<boolean> => {
    const rows = (await trx(tables.members).select(m.userId, m.role).where({ [m.organizationId]: organizationId })) as Row[]
    return rows.some((row) => String(row[m.userId]) !== userId && (parseStoredRoles(row[m.role]) ?? []).includes(ownerRole))
  }

  return {
    async createOrganization(organization, owner) {
      const now = new Date(Date.now())
      const created: AdapterOrganization = { id: randomUUID(), name: organization.name, slug: organization.slug, logo: organization.logo ?? null, metadata: organization.metadata ?? null, createdAt: now }
      const member: AdapterMember = { id: randomUUID(), organizationId: created.id, userId: owner.userId, roles: [...owner.roles], createdAt: now }
      try {
        await knex.transaction(async (trx) => {
          await trx(tables.organizations).insert(organizationRow(created))
          await trx(tables.members).insert(values({ ...member, role: member.roles.join(',') }, m))
        })
      } catch (error) {
        if (isUniqueViolation(error)) return null
        throw error
      }
      return { organization: created, member }
    },

    async getOrganization(by) {
      const where = 'id' in by ? { [o.id]: by.id } : { [o.slug]: by.slug }
      const row = (await read(knex(tables.organizations).select().where(where)).first()) as Row | undefined
      return row ? toOrganization(row) : null
    },

    async updateOrganization(id, changes) {
      const changed = organizationRow({ name: changes.name, slug: changes.slug, logo: changes.logo, metadata: changes.metadata })
      try {
        if (Object.keys(changed).length > 0 && (await knex(tables.organizations).update(changed).where({ [o.id]: id })) === 0) return null
      } catch (error) {
        if (isUniqueViolation(error)) return 'slug_taken'
        throw error
      }
      const row = (await read(knex(tables.organizations).select().where({ [o.id]: id })).first()) as Row | undefined
      return row ? toOrganization(row) : null
    },

    async deleteOrganization(id) {
      // Asked before the transaction: SQLite's pool has one connection, which the transaction holds.
      const keys = await apiKeysExist()
      const sso = await ssoExists()
      return knex.transaction(async (trx) => {
        // Its API keys (the `apiKeys` option) go with it; the lookup's join refuses them already.
        if (keys) await trx(tables.apiKeys).where({ [naming.apiKeys.ownerType]: 'organization', [naming.apiKeys.ownerId]: id }).delete()
        // Foreign keys cascade on PostgreSQL and MySQL; SQLite enforces them only when told, so every row goes by name.
        const teamIds = trx(tables.teams).select(teams.id).where({ [teams.organizationId]: id })
        await trx(tables.teamMembers).whereIn(teamMembers.teamId, teamIds).delete()
        await trx(tables.teams).where({ [teams.organizationId]: id }).delete()
        await trx(tables.invitations).where({ [invitations.organizationId]: id }).delete()
        if (sso) {
          await trx(tables.ssoConnections).where({ [naming.ssoConnections.organizationId]: id }).delete()
          await trx(tables.ssoDomains).where({ [naming.ssoDomains.organizationId]: id }).delete()
        }
        await trx(tables.members).where({ [m.organizationId]: id }).delete()
        await trx(tables.sessions).update({ [sessions.activeOrganizationId]: null }).where({ [sessions.activeOrganizationId]: id })
        return (await trx(tables.organizations).where({ [o.id]: id }).delete()) > 0
      })
    },

    async listOrganizationsOfUser(userId) {
      const rows = (await read(
        knex(tables.organizations)
          .select([`${tables.organizations}.*`, ...memberColumns])
          .join(tables.members, `${tables.members}.${m.organizationId}`, `${tables.organizations}.${o.id}`)
          .where(`${tables.members}.${m.userId}`, userId)
          .orderBy([`${tables.members}.${m.createdAt}`, `${tables.members}.${m.id}`]),
      )) as Row[]
      return rows.map((row) => ({ organization: toOrganization(row), member: toMember(row, MEMBER_ALIAS) }))
    },

    async addMember({ organizationId, userId, roles }) {
      const member: AdapterMember = { id: randomUUID(), organizationId, userId, roles: [...roles], createdAt: new Date(Date.now()) }
      try {
        await knex(tables.members).insert(values({ ...member, role: member.roles.join(',') }, m))
      } catch (error) {
        if (isUniqueViolation(error)) return null
        throw error
      }
      return member
    },

    async getMember(organizationId, userId) {
      const row = (await read(knex(tables.members).select().where({ [m.organizationId]: organizationId, [m.userId]: userId })).first()) as Row | undefined
      return row ? toMember(row) : null
    },

    async listMembers(organizationId) {
      const userColumns = (['id', 'name', 'email', 'image'] as const).map((field) => `${tables.users}.${users[field]} as u_${field}`)
      const rows = (await read(
        knex(tables.members)
          .select([...memberColumns, ...userColumns])
          .join(tables.users, `${tables.users}.${users.id}`, `${tables.members}.${m.userId}`)
          .where(`${tables.members}.${m.organizationId}`, organizationId)
          .orderBy([`${tables.members}.${m.createdAt}`, `${tables.members}.${m.id}`]),
      )) as Row[]
      return rows.map(
        (row): AdapterMemberWithUser => ({
          ...toMember(row, MEMBER_ALIAS),
          user: { id: String(row.u_id), name: nullableString(row.u_name), email: nullableString(row.u_email), image: nullableString(row.u_image) },
        }),
      )
    },

    async countMembers(organizationId) {
      const row = (await knex(tables.members).count({ n: '*' }).where({ [m.organizationId]: organizationId }).first()) as { n: number | string } | undefined
      return Number(row?.n ?? 0)
    },

    async updateMemberRoles(organizationId, userId, roles, ownerRole): Promise<MembershipChange> {
      return knex.transaction(async (trx) => {
        const held = await lockedRoles(trx, organizationId, userId)
        if (!held) return 'not_found'
        if (held.includes(ownerRole) && !roles.includes(ownerRole) && !(await keepsAnOwner(trx, organizationId, userId, ownerRole))) return 'last_owner'
        await trx(tables.members).update({ [m.role]: roles.join(',') }).where({ [m.organizationId]: organizationId, [m.userId]: userId })
        return 'done'
      })
    },

    async removeMember(organizationId, userId, ownerRole): Promise<MembershipChange> {
      return knex.transaction(async (trx) => {
        const held = await lockedRoles(trx, organizationId, userId)
        if (!held) return 'not_found'
        if (held.includes(ownerRole) && !(await keepsAnOwner(trx, organizationId, userId, ownerRole))) return 'last_owner'
        const where = { [m.organizationId]: organizationId, [m.userId]: userId }
        const teamIds = trx(tables.teams).select(teams.id).where({ [teams.organizationId]: organizationId })
        await trx(tables.teamMembers).where({ [teamMembers.userId]: userId }).whereIn(teamMembers.teamId, teamIds).delete()
        await trx(tables.members).where(where).delete()
        return 'done'
      })
    },
  }
}

/** The user's memberships (and team memberships), deleted with the user by `deleteUser`. */
export function knexOrganizationUserRows(knex: Knex, { tables, members, teamMembers }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.members, async (trx, userId) => {
    await trx(tables.teamMembers).where({ [teamMembers.userId]: userId }).delete()
    await trx(tables.members).where({ [members.userId]: userId }).delete()
  })
}

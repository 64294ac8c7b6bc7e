/**
 * The Knex adapter's invitations (the organizations migration's `invitations` table), composed into
 * `KnexAdapter` by src/adapters/knex/index.ts. A token is stored as its SHA-256 only, and is used
 * once because settling an invitation is one UPDATE … WHERE status = 'pending': of two requests
 * racing with the same token, the database lets exactly one change the row.
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableString, toDate, toUtcText, type Row, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import { parseStoredRoles } from '../roles/stored.js'
import type { AdapterInvitation, InvitationStatus } from './types.js'

type InvitationMethod = 'createInvitation' | 'getInvitation' | 'getInvitationByTokenHash' | 'listInvitations' | 'listInvitationsForEmail' | 'settleInvitation' | 'updateInvitationToken' | 'pruneInvitations'

/** `KnexAdapter`'s invitation methods (see `Adapter` for each). */
export interface KnexInvitationMethods extends Required<Pick<Adapter, InvitationMethod>> {}

const PENDING: InvitationStatus = 'pending'

/** The invitation methods on `knex`'s invitations table. */
export function knexInvitationMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, values, utcText }: RowCodec): KnexInvitationMethods {
  const { tables, invitations: i } = naming
  // A date in a WHERE clause as the column stores it (MySQL/MariaDB: UTC text).
  const at = (date: Date): Knex.Value => (utcText ? toUtcText(date) : date)
  const table = () => knex(tables.invitations)
  const toInvitation = (row: Row): AdapterInvitation => ({
    id: String(row[i.id]),
    organizationId: String(row[i.organizationId]),
    email: String(row[i.email]),
    roles: parseStoredRoles(row[i.role]) ?? [],
    teamId: nullableString(row[i.teamId]),
    tokenHash: String(row[i.tokenHash]),
    status: String(row[i.status]) as InvitationStatus,
    inviterId: nullableString(row[i.inviterId]),
    createdAt: toDate(row[i.createdAt]),
    expiresAt: toDate(row[i.expiresAt]),
    sentAt: toDate(row[i.sentAt]),
  })
  const one = async (where: Row): Promise<AdapterInvitation | null> => {
    const row = (await read(table().select().where(where)).first()) as Row | undefined
    return row ? toInvitation(row) : null
  }
  const oldestFirst = [i.createdAt, i.id]

  return {
    async createInvitation(invitation) {
      const created: AdapterInvitation = { ...invitation, id: randomUUID(), roles: [...invitation.roles], status: PENDING, createdAt: new Date(Date.now()) }
      await table().insert(values({ ...created, role: created.roles.join(',') }, i))
      return created
    },

    getInvitation: (id) => one({ [i.id]: id }),

    getInvitationByTokenHash: (tokenHash) => one({ [i.tokenHash]: tokenHash }),

    async listInvitations(organizationId) {
      const rows = (await read(table().select().where({ [i.organizationId]: organizationId, [i.status]: PENDING }).orderBy(oldestFirst))) as Row[]
      return rows.map(toInvitation)
    },

    async listInvitationsForEmail(email) {
      const rows = (await read(
        table()
          .select()
          .where({ [i.email]: email, [i.status]: PENDING })
          .andWhere(i.expiresAt, '>', at(new Date(Date.now())))
          .orderBy(oldestFirst),
      )) as Row[]
      return rows.map(toInvitation)
    },

    async settleInvitation(id, status, { expect }) {
      // The compare-and-set that makes a token single use: the row changes only while it is still `expect`.
      return (await table().update({ [i.status]: status }).where({ [i.id]: id, [i.status]: expect })) === 1
    },

    async updateInvitationToken(id, tokenHash, sentAt, expiresAt, roles) {
      const changes = values({ tokenHash, sentAt, expiresAt, ...(roles ? { role: roles.join(',') } : {}) }, i)
      return (await table().update(changes).where({ [i.id]: id, [i.status]: PENDING })) === 1
    },

    async pruneInvitations(before) {
      // Whatever their status: a settled invitation's row is kept only until it would have expired.
      return Number(await table().where(i.expiresAt, '<', at(before)).delete())
    },
  }
}

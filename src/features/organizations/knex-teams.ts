/**
 * The Knex adapter's teams (the organizations migration's `Team` and `TeamMember` tables), composed
 * into `KnexAdapter` by src/adapters/knex/index.ts. A team member is a member of the team's
 * organization: `addTeamMember` writes only while that membership exists, and a removal from the
 * organization deletes the user's team rows there (knex.ts).
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableString, toDate, type Row, type RowCodec } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import type { AdapterTeam } from './types.js'

type TeamMethod = 'createTeam' | 'getTeam' | 'listTeams' | 'countTeams' | 'renameTeam' | 'deleteTeam' | 'addTeamMember' | 'removeTeamMember' | 'listTeamMembers'

/** `KnexAdapter`'s team methods (see `Adapter` for each). */
export interface KnexTeamMethods extends Required<Pick<Adapter, TeamMethod>> {}

/** The team methods on `knex`'s teams and team members tables. */
export function knexTeamMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, values }: RowCodec): KnexTeamMethods {
  const { tables, teams: t, teamMembers: tm, members: m, users } = naming
  const lockable = knex.client.dialect === 'postgresql' || knex.client.dialect === 'mysql'
  const toTeam = (row: Row): AdapterTeam => ({ id: String(row[t.id]), organizationId: String(row[t.organizationId]), name: String(row[t.name]), createdAt: toDate(row[t.createdAt]) })
  return {
    async createTeam({ organizationId, name }) {
      const team: AdapterTeam = { id: randomUUID(), organizationId, name, createdAt: new Date(Date.now()) }
      await knex(tables.teams).insert(values(team, t))
      return team
    },

    async getTeam(organizationId, teamId) {
      const row = (await read(knex(tables.teams).select().where({ [t.id]: teamId, [t.organizationId]: organizationId })).first()) as Row | undefined
      return row ? toTeam(row) : null
    },

    async listTeams(organizationId) {
      return ((await read(knex(tables.teams).select().where({ [t.organizationId]: organizationId }).orderBy([t.createdAt, t.id]))) as Row[]).map(toTeam)
    },

    async countTeams(organizationId) {
      const row = (await knex(tables.teams).count({ n: '*' }).where({ [t.organizationId]: organizationId }).first()) as { n: number | string } | undefined
      return Number(row?.n ?? 0)
    },

    async renameTeam(organizationId, teamId, name) {
      if ((await knex(tables.teams).update({ [t.name]: name }).where({ [t.id]: teamId, [t.organizationId]: organizationId })) === 0) return null
      const row = (await read(knex(tables.teams).select().where({ [t.id]: teamId })).first()) as Row | undefined
      return row ? toTeam(row) : null
    },

    async deleteTeam(organizationId, teamId) {
      return knex.transaction(async (trx) => {
        const team = await trx(tables.teams).select(t.id).where({ [t.id]: teamId, [t.organizationId]: organizationId }).first()
        if (!team) return false
        await trx(tables.teamMembers).where({ [tm.teamId]: teamId }).delete()
        await trx(tables.teams).where({ [t.id]: teamId }).delete()
        return true
      })
    },

    async addTeamMember(organizationId, teamId, userId) {
      // The membership's row locked while the team's is written: a removal from the organization (which
      // deletes the user's team rows in its own transaction) cannot slip in between.
      return knex.transaction(async (trx) => {
        const team = await trx(tables.teams).select(t.id).where({ [t.id]: teamId, [t.organizationId]: organizationId }).first()
        if (!team) return 'not_found'
        const query = trx(tables.members).select(m.id).where({ [m.organizationId]: organizationId, [m.userId]: userId })
        if (!(await (lockable ? query.forUpdate() : query).first())) return 'not_member'
        if (await trx(tables.teamMembers).select(tm.userId).where({ [tm.teamId]: teamId, [tm.userId]: userId }).first()) return 'already'
        await trx(tables.teamMembers).insert(values({ teamId, userId, createdAt: new Date(Date.now()) }, tm))
        return 'added'
      })
    },

    async removeTeamMember(organizationId, teamId, userId) {
      const team = await knex(tables.teams).select(t.id).where({ [t.id]: teamId, [t.organizationId]: organizationId }).first()
      if (!team) return false
      return (await knex(tables.teamMembers).where({ [tm.teamId]: teamId, [tm.userId]: userId }).delete()) > 0
    },

    async listTeamMembers(organizationId, teamId) {
      const rows = (await read(
        knex(tables.teamMembers)
          .select(`${tables.teamMembers}.${tm.userId} as user_id`, `${tables.users}.${users.name} as u_name`, `${tables.users}.${users.email} as u_email`)
          .join(tables.teams, `${tables.teams}.${t.id}`, `${tables.teamMembers}.${tm.teamId}`)
          .join(tables.users, `${tables.users}.${users.id}`, `${tables.teamMembers}.${tm.userId}`)
          .where(`${tables.teams}.${t.id}`, teamId)
          .andWhere(`${tables.teams}.${t.organizationId}`, organizationId)
          .orderBy(`${tables.teamMembers}.${tm.createdAt}`),
      )) as Row[]
      return rows.map((row) => ({ userId: String(row.user_id), name: nullableString(row.u_name), email: nullableString(row.u_email) }))
    },
  }
}

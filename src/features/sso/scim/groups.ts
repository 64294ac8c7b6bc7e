/**
 * Groups (RFC 7643 §4.2) are the organization's teams, when `organizations.teams` is on: a group's
 * id is the team's, its displayName the team's name, its members the team's (each a member of the
 * organization). With teams off every /Groups request is 501, as ServiceProviderConfig says.
 * GET /Groups (`filter` `displayName eq` or `id eq`, paging; `excludedAttributes=members`) and
 * GET /Groups/:id are here; the changes in group-change.ts.
 */
import type { Adapter } from '../../../types.js'
import type { TEAM_ADAPTER_METHODS } from '../../organizations/config.js'
import type { AdapterTeam } from '../../organizations/types.js'
import { MAX_RESULTS, type ScimCall } from './call.js'
import { groupsOn } from './discovery.js'
import { notFound, ScimError, URN } from './errors.js'
import { listResponse, paging, parseFilter } from './filter.js'
import type { ScimAnswer } from './answer.js'

export type TeamAdapter = Required<Pick<Adapter, (typeof TEAM_ADAPTER_METHODS)[number]>>

/** The team methods. @throws ScimError 501 when teams are off */
export function teamsOf(call: ScimCall): TeamAdapter {
  if (!groupsOn(call)) throw new ScimError(501, 'Groups are the organization\'s teams, and teams are off on this server (organizations.teams).')
  return call.adapter as unknown as TeamAdapter
}

/** The organization's team `id`. @throws ScimError 404 */
export async function teamOf(call: ScimCall, id: string): Promise<AdapterTeam> {
  const team = id.length > 255 ? null : await teamsOf(call).getTeam(call.connection.organizationId, id)
  if (!team) throw notFound('Group', id)
  return team
}

/** The Group resource, with its members unless they are excluded. */
export async function groupResource(call: ScimCall, team: AdapterTeam, withMembers = true): Promise<Record<string, unknown>> {
  const members = withMembers ? await teamsOf(call).listTeamMembers(call.connection.organizationId, team.id) : []
  return {
    schemas: [URN.group],
    id: team.id,
    displayName: team.name,
    ...(withMembers && { members: members.map((member) => ({ value: member.userId, display: member.name ?? member.email, $ref: `${call.baseUrl}/Users/${encodeURIComponent(member.userId)}` })) }),
    meta: { resourceType: 'Group', created: team.createdAt.toISOString(), location: `${call.baseUrl}/Groups/${encodeURIComponent(team.id)}` },
  }
}

function membersWanted(call: ScimCall): boolean {
  const excluded = (call.query.get('excludedAttributes') ?? '').toLowerCase().split(',').map((name) => name.trim())
  return !excluded.includes('members')
}

export async function listGroups(call: ScimCall): Promise<ScimAnswer> {
  const teams = await teamsOf(call).listTeams(call.connection.organizationId)
  const filter = parseFilter(call.query.get('filter'), ['displayname', 'id'])
  // displayName is caseExact false (RFC 7643 §4.2).
  const found = !filter ? teams : teams.filter((team) => (filter.attribute === 'id' ? team.id === filter.value : team.name.toLowerCase() === filter.value.toLowerCase()))
  const withMembers = membersWanted(call)
  return { status: 200, body: await listResponse(found, paging(call.query, MAX_RESULTS), (team) => groupResource(call, team, withMembers)) }
}

export async function getGroup(call: ScimCall, id: string): Promise<ScimAnswer> {
  return { status: 200, body: await groupResource(call, await teamOf(call, id), membersWanted(call)) }
}

/**
 * Teams inside organizations (`organizations.teams`): any member lists them and their members;
 * creating, renaming and deleting one needs `team: ['create']`, `['update']`, `['delete']`, and so
 * does changing who is in it (`team: ['update']`). A team's members are members of its organization.
 * Teams carry no permissions of their own: they group members for the app (its own checks read them).
 */
import { emitEvent } from '../../events.js'
import { idOf, membershipOf, type Caller } from './call.js'
import { OrganizationError } from './errors.js'
import type { AdapterTeam, OrganizationTeam } from './types.js'

/** @throws OrganizationError `invalid_input` when teams are off. */
function assertTeams(caller: Caller): { maxTeamsPerOrganization: number } {
  if (!caller.options.teams) throw new OrganizationError('invalid_input', 'Teams are off: set organizations.teams to use them.')
  return caller.options.teams
}

function teamShape(team: AdapterTeam): OrganizationTeam {
  return { id: team.id, organizationId: team.organizationId, name: team.name, createdAt: team.createdAt.toISOString() }
}

function nameOf(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 255) throw new OrganizationError('invalid_input', "A team's name must be 1 to 255 characters.")
  return name.trim()
}

/** The organization's teams. @throws OrganizationError `not_found` */
export async function listTeams(caller: Caller, organizationId: unknown): Promise<OrganizationTeam[]> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId)
  return (await caller.adapter.listTeams(organization.id)).map(teamShape)
}

/** @throws OrganizationError `not_found`, `forbidden`, `invalid_input`, `limit_reached` */
export async function createTeam(caller: Caller, organizationId: unknown, name: unknown): Promise<OrganizationTeam> {
  const { maxTeamsPerOrganization } = assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId, { team: ['create'] })
  const checked = nameOf(name)
  if ((await caller.adapter.countTeams(organization.id)) >= maxTeamsPerOrganization) throw new OrganizationError('limit_reached', `The organization has ${maxTeamsPerOrganization} teams, the most it may (teams.maxTeamsPerOrganization).`)
  const team = await caller.adapter.createTeam({ organizationId: organization.id, name: checked })
  await emitEvent(caller.ctx.config, 'teamCreated', { organizationId: organization.id, teamId: team.id, name: team.name, userId: caller.userId })
  return teamShape(team)
}

/** @throws OrganizationError `not_found`, `forbidden`, `invalid_input` */
export async function renameTeam(caller: Caller, organizationId: unknown, teamId: unknown, name: unknown): Promise<OrganizationTeam> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId, { team: ['update'] })
  const team = await caller.adapter.renameTeam(organization.id, idOf(teamId, 'teamId'), nameOf(name))
  if (!team) throw new OrganizationError('not_found', 'No such team in this organization.')
  return teamShape(team)
}

/** @throws OrganizationError `not_found`, `forbidden` */
export async function deleteTeam(caller: Caller, organizationId: unknown, teamId: unknown): Promise<void> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId, { team: ['delete'] })
  const id = idOf(teamId, 'teamId')
  if (!(await caller.adapter.deleteTeam(organization.id, id))) throw new OrganizationError('not_found', 'No such team in this organization.')
  await emitEvent(caller.ctx.config, 'teamDeleted', { organizationId: organization.id, teamId: id, userId: caller.userId })
}

/** The team's members. @throws OrganizationError `not_found` */
export async function listTeamMembers(caller: Caller, organizationId: unknown, teamId: unknown): Promise<{ userId: string; name: string | null; email: string | null }[]> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId)
  const id = idOf(teamId, 'teamId')
  if (!(await caller.adapter.getTeam(organization.id, id))) throw new OrganizationError('not_found', 'No such team in this organization.')
  return caller.adapter.listTeamMembers(organization.id, id)
}

/** Puts a member of the organization in its team. @throws OrganizationError `not_found` (no such team, or the user is no member), `forbidden` */
export async function addTeamMember(caller: Caller, organizationId: unknown, teamId: unknown, userId: unknown): Promise<void> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId, { team: ['update'] })
  const [team, user] = [idOf(teamId, 'teamId'), idOf(userId, 'userId')]
  const added = await caller.adapter.addTeamMember(organization.id, team, user)
  if (added === 'not_found') throw new OrganizationError('not_found', 'No such team in this organization.')
  if (added === 'not_member') throw new OrganizationError('not_found', 'No such member of this organization.')
  if (added === 'added') await emitEvent(caller.ctx.config, 'teamMemberAdded', { organizationId: organization.id, teamId: team, userId: user, by: caller.userId })
}

/** Takes a user out of the team (they stay a member of the organization). @throws OrganizationError `not_found`, `forbidden` */
export async function removeTeamMember(caller: Caller, organizationId: unknown, teamId: unknown, userId: unknown): Promise<void> {
  assertTeams(caller)
  const { organization } = await membershipOf(caller, organizationId, { team: ['update'] })
  const [team, user] = [idOf(teamId, 'teamId'), idOf(userId, 'userId')]
  if (!(await caller.adapter.removeTeamMember(organization.id, team, user))) throw new OrganizationError('not_found', 'No such member of this team.')
  await emitEvent(caller.ctx.config, 'teamMemberRemoved', { organizationId: organization.id, teamId: team, userId: user, by: caller.userId })
}

/**
 * POST /Groups (a team made, with its members), PATCH /Groups/:id (PatchOp: `add` or `remove` of
 * `members`, `remove` of `members[value eq "<id>"]`, `replace` of `displayName` or of `members`,
 * with a path or as a value object) and DELETE /Groups/:id. A group's member must be a member of the
 * organization (a provisioned, active user): anyone else is refused (400 `invalidValue`).
 */
import { organizationsOf } from '../../organizations/config.js'
import type { ScimCall } from './call.js'
import { ScimError } from './errors.js'
import { groupResource, teamOf, teamsOf } from './groups.js'
import type { ScimAnswer } from './answer.js'
import { patchOperations, scimText, type PatchOperation } from './patch.js'

export async function createGroup(call: ScimCall, body: Record<string, unknown>): Promise<ScimAnswer> {
  const teams = teamsOf(call)
  const organizationId = call.connection.organizationId
  const name = await freeName(call, body.displayName)
  if ((await teams.countTeams(organizationId)) >= organizationsOf(call.config)!.teams!.maxTeamsPerOrganization) throw new ScimError(400, 'The organization has as many teams as it may (organizations.teams.maxTeamsPerOrganization).', 'invalidValue')
  const team = await teams.createTeam({ organizationId, name })
  await addMembers(call, team.id, body.members)
  return { status: 201, body: await groupResource(call, team), location: `${call.baseUrl}/Groups/${encodeURIComponent(team.id)}` }
}

/** A team name no other team of the organization has. @throws ScimError 400, 409 `uniqueness` */
async function freeName(call: ScimCall, given: unknown, except?: string): Promise<string> {
  const name = scimText(given, 'displayName')
  if (name === null) throw new ScimError(400, 'displayName is required.', 'invalidValue')
  const teams = await teamsOf(call).listTeams(call.connection.organizationId)
  if (teams.some((team) => team.id !== except && team.name.toLowerCase() === name.toLowerCase())) throw new ScimError(409, `The organization has a team named ${JSON.stringify(name)} already.`, 'uniqueness')
  return name
}

/** The user ids of a `members` value: `[{ value: id }, …]`. */
function memberIds(value: unknown): string[] {
  if (value === undefined || value === null) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((member: unknown) => {
    const id = (member as { value?: unknown } | null)?.value
    if (typeof id !== 'string' || id === '' || id.length > 255) throw new ScimError(400, 'A member is { "value": "<user id>" }.', 'invalidValue')
    return id
  })
}

async function addMembers(call: ScimCall, teamId: string, value: unknown): Promise<void> {
  for (const userId of memberIds(value)) {
    const added = await teamsOf(call).addTeamMember(call.connection.organizationId, teamId, userId)
    if (added === 'not_member') throw new ScimError(400, `User ${JSON.stringify(userId)} is not an active member of the organization: provision them first.`, 'invalidValue')
  }
}

async function removeMembers(call: ScimCall, teamId: string, userIds: readonly string[]): Promise<void> {
  for (const userId of userIds) await teamsOf(call).removeTeamMember(call.connection.organizationId, teamId, userId)
}

export async function patchGroup(call: ScimCall, id: string, body: Record<string, unknown>): Promise<ScimAnswer> {
  const team = await teamOf(call, id)
  for (const operation of patchOperations(body)) await applyGroupOperation(call, team.id, operation)
  return { status: 204 }
}

const MEMBER_FILTER = /^members\[value eq "((?:[^"\\]|\\.)*)"\]$/i

async function applyGroupOperation(call: ScimCall, teamId: string, { op, path, rawPath, value }: PatchOperation): Promise<void> {
  const organizationId = call.connection.organizationId
  const selected = rawPath === undefined ? null : MEMBER_FILTER.exec(rawPath.trim())
  if (selected && op === 'remove') return removeMembers(call, teamId, [JSON.parse(`"${selected[1]!}"`) as string])
  if (path === 'members' && op === 'add') return addMembers(call, teamId, value)
  if (path === 'members' && op === 'remove') {
    return removeMembers(call, teamId, value === undefined ? (await teamsOf(call).listTeamMembers(organizationId, teamId)).map((member) => member.userId) : memberIds(value))
  }
  if (path === 'members' && op === 'replace') {
    await removeMembers(call, teamId, (await teamsOf(call).listTeamMembers(organizationId, teamId)).map((member) => member.userId))
    return addMembers(call, teamId, value)
  }
  if (path === 'displayname' && op !== 'remove') return rename(call, teamId, value)
  if (path === undefined && value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) if (key.toLowerCase() !== 'id') await applyGroupOperation(call, teamId, { op, path: key.toLowerCase(), value: inner })
    return
  }
  if (path === 'externalid') return
  throw new ScimError(400, `This server does not ${op} ${JSON.stringify(path ?? '(no path)')} of a group.`, 'invalidPath')
}

async function rename(call: ScimCall, teamId: string, value: unknown): Promise<void> {
  await teamsOf(call).renameTeam(call.connection.organizationId, teamId, await freeName(call, value, teamId))
}

export async function deleteGroup(call: ScimCall, id: string): Promise<ScimAnswer> {
  const team = await teamOf(call, id)
  await teamsOf(call).deleteTeam(call.connection.organizationId, team.id)
  return { status: 204 }
}

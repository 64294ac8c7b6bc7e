/** The server-side team functions (`organizations.teams`): list, create, rename, delete, and their members. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { OrganizationTeam } from '../types.js'
import { organizationCall, type OrganizationsCallContext } from './context.js'

let engine: Promise<typeof import('../teams.js')> | undefined
const loadTeams = (): Promise<typeof import('../teams.js')> => (engine ??= import('../teams.js'))

/**
 * The server-side team functions, each on the signed-in member's request. Listing needs only
 * membership; creating, renaming and deleting need `team: ['create']`, `['update']`, `['delete']`;
 * changing who is in a team `team: ['update']`. The changing ones are CSRF-checked.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`, `invalid_input` (also: teams off), `limit_reached`; MissingCSRFError
 * @example
 * ```ts
 * const team = await teams.createTeam(req, { organizationId, name: 'Support', csrfToken: req.body.csrfToken })
 * await teams.addTeamMember(req, { organizationId, teamId: team.id, userId, csrfToken: req.body.csrfToken })
 * ```
 */
export interface TeamFunctions {
  listTeams(req: OrganizationsCallContext, options: { organizationId: string }): Promise<OrganizationTeam[]>
  createTeam(req: OrganizationsCallContext, options: { organizationId: string; name: string } & CsrfOptions): Promise<OrganizationTeam>
  renameTeam(req: OrganizationsCallContext, options: { organizationId: string; teamId: string; name: string } & CsrfOptions): Promise<OrganizationTeam>
  deleteTeam(req: OrganizationsCallContext, options: { organizationId: string; teamId: string } & CsrfOptions): Promise<void>
  listTeamMembers(req: OrganizationsCallContext, options: { organizationId: string; teamId: string }): Promise<{ userId: string; name: string | null; email: string | null }[]>
  addTeamMember(req: OrganizationsCallContext, options: { organizationId: string; teamId: string; userId: string } & CsrfOptions): Promise<void>
  removeTeamMember(req: OrganizationsCallContext, options: { organizationId: string; teamId: string; userId: string } & CsrfOptions): Promise<void>
}

export function createTeamFunctions(api: Api): TeamFunctions {
  const call = async (given: unknown, what: string, options: object | undefined, csrf: boolean) => {
    const { caller } = await organizationCall(api, given, what, csrf ? ((options ?? {}) as CsrfOptions) : undefined)
    return { caller, teams: await loadTeams() }
  }
  return {
    listTeams: async (req, o) => {
      const { caller, teams } = await call(req, 'listTeams()', o, false)
      return teams.listTeams(caller, o?.organizationId)
    },
    createTeam: async (req, o) => {
      const { caller, teams } = await call(req, 'createTeam()', o, true)
      return teams.createTeam(caller, o.organizationId, o.name)
    },
    renameTeam: async (req, o) => {
      const { caller, teams } = await call(req, 'renameTeam()', o, true)
      return teams.renameTeam(caller, o.organizationId, o.teamId, o.name)
    },
    deleteTeam: async (req, o) => {
      const { caller, teams } = await call(req, 'deleteTeam()', o, true)
      await teams.deleteTeam(caller, o.organizationId, o.teamId)
    },
    listTeamMembers: async (req, o) => {
      const { caller, teams } = await call(req, 'listTeamMembers()', o, false)
      return teams.listTeamMembers(caller, o?.organizationId, o?.teamId)
    },
    addTeamMember: async (req, o) => {
      const { caller, teams } = await call(req, 'addTeamMember()', o, true)
      await teams.addTeamMember(caller, o.organizationId, o.teamId, o.userId)
    },
    removeTeamMember: async (req, o) => {
      const { caller, teams } = await call(req, 'removeTeamMember()', o, true)
      await teams.removeTeamMember(caller, o.organizationId, o.teamId, o.userId)
    },
  }
}

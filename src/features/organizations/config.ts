/**
 * The `organizations` option, resolved once at init into a frozen object: the permissions (the
 * wing's statements with the app's), the limits, teams, and the invitations' settings.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import type { AccessControl } from '../roles/access.js'
import { memberRoleNames, organizationAccess } from './access.js'
import type { OrganizationsOptions } from './types.js'

/** The resolved option, `config.features.organizations`. */
export interface ResolvedOrganizations {
  readonly access: AccessControl
  /** The roles a member may hold. */
  readonly roleNames: readonly string[]
  readonly allowCreate: NonNullable<OrganizationsOptions['allowCreate']>
  readonly organizationsPerUser: number
  readonly membersPerOrganization: number
  /** Undefined when teams are off. */
  readonly teams: { readonly maxTeamsPerOrganization: number } | undefined
  readonly invitationExpiresIn: number
  readonly defaultInvitationRole: string
  readonly server: OrganizationsOptions['server']
  readonly from: string | undefined
  readonly sendMail: OrganizationsOptions['sendMail']
}

const KNOWN = ['statements', 'roles', 'allowCreate', 'organizationsPerUser', 'membersPerOrganization', 'teams', 'invitationExpiresIn', 'defaultInvitationRole', 'server', 'from', 'sendMail']

/** Resolves `organizations`: undefined when it is off. @throws InvalidConfigurationError saying what to change. */
export function resolveOrganizations(option: PortcullisConfig['organizations']): ResolvedOrganizations | undefined {
  if (option === undefined || option === false) return undefined
  const given: OrganizationsOptions = option === true ? {} : option
  if (!given || typeof given !== 'object' || Array.isArray(given)) throw new InvalidConfigurationError('organizations must be true or an object ({ statements, roles, organizationsPerUser, … }). See docs/organizations.md.')
  const unknown = Object.keys(given).filter((key) => !KNOWN.includes(key))
  if (unknown.length > 0) throw new InvalidConfigurationError(`organizations: unknown option ${unknown.map((key) => `'${key}'`).join(', ')} (it takes ${KNOWN.join(', ')}).`)
  let access: AccessControl
  try {
    access = organizationAccess(given.statements, given.roles as never)
  } catch (error) {
    throw new InvalidConfigurationError((error as Error).message)
  }
  const roleNames = memberRoleNames(access, given.roles)
  const allowCreate = given.allowCreate ?? true
  if (typeof allowCreate !== 'boolean' && typeof allowCreate !== 'function') throw new InvalidConfigurationError('organizations.allowCreate must be true, false or a function (user) => boolean.')
  const defaultInvitationRole = given.defaultInvitationRole ?? 'member'
  if (!roleNames.includes(defaultInvitationRole)) throw new InvalidConfigurationError(`organizations.defaultInvitationRole must be one of the roles (${roleNames.join(', ')}); got ${JSON.stringify(defaultInvitationRole)}.`)
  const teams = given.teams === undefined || given.teams === false ? undefined : { maxTeamsPerOrganization: count(given.teams === true ? undefined : given.teams.maxTeamsPerOrganization, 100, 'teams.maxTeamsPerOrganization') }
  if (given.from !== undefined && typeof given.from !== 'string') throw new InvalidConfigurationError('organizations.from must be an address, e.g. "Acme <no-reply@acme.test>".')
  if (given.sendMail !== undefined && typeof given.sendMail !== 'function') throw new InvalidConfigurationError('organizations.sendMail must be a function (mail) => void.')
  return Object.freeze({
    access,
    roleNames,
    allowCreate,
    organizationsPerUser: count(given.organizationsPerUser, 100, 'organizationsPerUser'),
    membersPerOrganization: count(given.membersPerOrganization, 1000, 'membersPerOrganization'),
    teams: teams && Object.freeze(teams),
    invitationExpiresIn: count(given.invitationExpiresIn, 7 * 86400, 'invitationExpiresIn', 60),
    defaultInvitationRole,
    server: given.server,
    from: given.from,
    sendMail: given.sendMail,
  })
}

function count(value: number | undefined, fallback: number, name: string, least = 1): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < least) throw new InvalidConfigurationError(`organizations.${name} must be a whole number of at least ${least}; got ${JSON.stringify(value)}.`)
  return value
}

/** The resolved option of a config that turns it on. */
export function organizationsOf(config: Pick<ResolvedConfig, 'features'>): ResolvedOrganizations | undefined {
  return config.features.organizations as ResolvedOrganizations | undefined
}

/** The adapter methods the wing calls. */
export const ORGANIZATION_ADAPTER_METHODS = [
  'createOrganization',
  'getOrganization',
  'updateOrganization',
  'deleteOrganization',
  'listOrganizationsOfUser',
  'addMember',
  'getMember',
  'listMembers',
  'countMembers',
  'updateMemberRoles',
  'removeMember',
  'createInvitation',
  'getInvitation',
  'getInvitationByTokenHash',
  'listInvitations',
  'listInvitationsForEmail',
  'settleInvitation',
  'pruneInvitations',
  'updateInvitationToken',
] as const

/** Those the teams (`organizations.teams`) call besides. */
export const TEAM_ADAPTER_METHODS = ['createTeam', 'getTeam', 'listTeams', 'countTeams', 'renameTeam', 'deleteTeam', 'addTeamMember', 'removeTeamMember', 'listTeamMembers'] as const

/**
 * What the organizations' server-side functions and routes share: the signed-in user (by a cookie
 * session: an API key or an access token cannot manage organizations), the adapter, and the check of
 * the caller's own membership, read fresh from the database (never from the session, whose roles
 * may be as of a switch) before any change. An organization the caller is not in is `not_found`,
 * the same answer as one that does not exist: ids of others reveal nothing.
 */
import type { ActionContext } from '../../actions/context.js'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { signedInUserId } from '../../session/strategy.js'
import type { Adapter } from '../../types.js'
import type { Permissions } from '../roles/access.js'
import { ORGANIZATION_ADAPTER_METHODS, organizationsOf, TEAM_ADAPTER_METHODS, type ResolvedOrganizations } from './config.js'
import { OrganizationError } from './errors.js'
import type { AdapterMember, AdapterOrganization } from './types.js'

/** The adapter with the wing's methods (the team ones are there when teams are on: the feature's check). */
export type OrganizationAdapter = Required<Pick<Adapter, (typeof ORGANIZATION_ADAPTER_METHODS)[number] | (typeof TEAM_ADAPTER_METHODS)[number] | 'getUser' | 'getUserByEmail'>>

/** Who is calling, on which config. */
export interface Caller {
  readonly ctx: ActionContext
  readonly userId: string
  readonly options: ResolvedOrganizations
  readonly adapter: OrganizationAdapter
}

/** @throws InvalidConfigurationError when the option is off. */
export function optionsOf(config: ResolvedConfig, what: string): ResolvedOrganizations {
  const options = organizationsOf(config)
  if (!options) throw new InvalidConfigurationError(`${what} needs the organizations option: Portcullis({ organizations: true }) (and the organizations migration). See docs/organizations.md.`)
  return options
}

export function organizationAdapter(config: ResolvedConfig): OrganizationAdapter {
  return config.adapter as OrganizationAdapter
}

/** The signed-in user's call. @throws OrganizationError `not_signed_in` */
export async function callerOf(ctx: ActionContext, what: string): Promise<Caller> {
  const options = optionsOf(ctx.config, what)
  const userId = await signedInUserId(ctx)
  if (!userId) throw new OrganizationError('not_signed_in', `${what}: nobody is signed in on this request (a cookie session is needed).`)
  return { ctx, userId, options, adapter: organizationAdapter(ctx.config) }
}

/** A non-empty id of at most 255 characters. @throws OrganizationError `invalid_input` */
export function idOf(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 255) throw new OrganizationError('invalid_input', `${what} must be a non-empty id.`)
  return value
}

/**
 * The organization and the caller's membership of it, when they are a member; else `not_found`.
 * With `permissions`, their roles there must grant them, else `forbidden`.
 */
export async function membershipOf(caller: Caller, organizationId: unknown, permissions?: Permissions): Promise<{ organization: AdapterOrganization; member: AdapterMember }> {
  const id = idOf(organizationId, 'organizationId')
  const member = await caller.adapter.getMember(id, caller.userId)
  const organization = member && (await caller.adapter.getOrganization({ id }))
  if (!member || !organization) throw new OrganizationError('not_found', 'No such organization among yours.')
  if (permissions && !caller.options.access.can(member.roles, permissions)) throw new OrganizationError('forbidden', 'Your roles in this organization do not allow this.')
  return { organization, member }
}

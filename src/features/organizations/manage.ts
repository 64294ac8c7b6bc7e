/**
 * The organizations' engine: creating, changing and deleting organizations, and their members'
 * roles and removal, each checked against the caller's membership read fresh from the database.
 * A change of a member's membership reaches their sessions within the roles' bound: database
 * sessions at once (the session read's join reads the membership), JWT sessions with a session
 * store by ending them (every process within `revocationCacheSeconds`), JWT sessions without a
 * store when their token expires. Loaded on the first call of a function or route that changes
 * something: never on the session read.
 */
import type { ResolvedConfig } from '../../config/types.js'
import { emitEvent } from '../../events.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { peekJwtToken } from '../../session/jwt-strategy.js'
import { setSessionField } from '../../session/session-field.js'
import { endJwtSessions } from '../roles/api/set-roles.js'
import { OWNER_ROLE } from './access.js'
import { idOf, membershipOf, type Caller } from './call.js'
import { OrganizationError } from './errors.js'
import { ACTIVE_ORGANIZATION_CLAIM, activeOrganizationField, activeOrganizationOf } from './session-field.js'
import { memberShape, membershipShape, organizationShape } from './shapes.js'
import type { AdapterOrganization, Organization, OrganizationMember, OrganizationMembership } from './types.js'

/** What creating an organization takes. */
export interface NewOrganization {
  name: string
  /** Default: from the name (`Acme Inc.` → `acme-inc`). */
  slug?: string | undefined
  logo?: string | null | undefined
  metadata?: Record<string, unknown> | null | undefined
}

/** What updating one takes: any of these. */
export type OrganizationChanges = Partial<Pick<NewOrganization, 'name' | 'slug' | 'logo' | 'metadata'>>

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const MAX_METADATA = 8 * 1024

/** The caller's organizations with their roles, oldest membership first. */
export async function listOrganizations(caller: Caller): Promise<OrganizationMembership[]> {
  return (await caller.adapter.listOrganizationsOfUser(caller.userId)).map(({ organization, member }) => membershipShape(organization, member))
}

/** One of the caller's organizations, by id or slug. @throws OrganizationError `not_found` */
export async function getOrganization(caller: Caller, by: { organizationId?: unknown; slug?: unknown }): Promise<OrganizationMembership> {
  let id = by.organizationId
  if (id === undefined && typeof by.slug === 'string') id = (await caller.adapter.getOrganization({ slug: by.slug }))?.id ?? '-'
  const { organization, member } = await membershipOf(caller, id)
  return membershipShape(organization, member)
}

/** Creates an organization, the caller its owner. @throws OrganizationError `forbidden`, `invalid_input`, `slug_taken`, `limit_reached` */
export async function createOrganization(caller: Caller, input: NewOrganization): Promise<OrganizationMembership> {
  const { options, adapter, userId } = caller
  const allowed = typeof options.allowCreate === 'function' ? await options.allowCreate({ id: userId, email: (await adapter.getUser(userId))?.email ?? null }) : options.allowCreate
  if (allowed !== true) throw new OrganizationError('forbidden', 'You may not create organizations here.')
  const fields = checkedFields(input ?? {}, true) as Required<Pick<NewOrganization, 'name'>> & OrganizationChanges
  const slug = fields.slug ?? slugOf(fields.name)
  const mine = await adapter.listOrganizationsOfUser(userId)
  if (mine.length >= options.organizationsPerUser) throw new OrganizationError('limit_reached', `You belong to ${mine.length} organizations, the most one user may (organizationsPerUser).`)
  const created = await adapter.createOrganization({ name: fields.name, slug, logo: fields.logo ?? null, metadata: fields.metadata ?? null }, { userId, roles: [OWNER_ROLE] })
  if (!created) throw new OrganizationError('slug_taken', `Another organization has the slug "${slug}".`)
  const organization = organizationShape(created.organization)
  await emitEvent(caller.ctx.config, 'organizationCreated', { organization, userId })
  await emitEvent(caller.ctx.config, 'memberAdded', { organizationId: organization.id, userId, roles: created.member.roles, by: userId })
  return membershipShape(created.organization, created.member)
}

/** Changes an organization's name, slug, logo or metadata. @throws OrganizationError `not_found`, `forbidden`, `invalid_input`, `slug_taken` */
export async function updateOrganization(caller: Caller, organizationId: unknown, changes: OrganizationChanges): Promise<Organization> {
  const { organization: current } = await membershipOf(caller, organizationId, { organization: ['update'] })
  const fields = checkedFields(changes ?? {}, false)
  const updated = await caller.adapter.updateOrganization(current.id, fields)
  if (updated === 'slug_taken') throw new OrganizationError('slug_taken', `Another organization has the slug "${fields.slug}".`)
  if (!updated) throw new OrganizationError('not_found', 'No such organization among yours.')
  const organization = organizationShape(updated)
  await emitEvent(caller.ctx.config, 'organizationUpdated', { organization, userId: caller.userId })
  return organization
}

/**
 * Deletes an organization with its members, invitations and teams. Its members' sessions lose it
 * as their active organization: database sessions at once; JWT sessions with a store are ended,
 * but the caller's own, which is switched to none (the caller's other JWT sessions name an
 * organization that no longer exists until they switch or expire).
 * @returns The cookies of the caller's session, switched to none when it was active (JWT).
 * @throws OrganizationError `not_found`, `forbidden`
 */
export async function deleteOrganization(caller: Caller, organizationId: unknown): Promise<OutgoingCookie[]> {
  const { organization } = await membershipOf(caller, organizationId, { organization: ['delete'] })
  const members = await caller.adapter.listMembers(organization.id)
  if (!(await caller.adapter.deleteOrganization(organization.id))) throw new OrganizationError('not_found', 'No such organization among yours.')
  for (const member of members) if (member.userId !== caller.userId) await reachSessions(caller.ctx.config, member.userId)
  await emitEvent(caller.ctx.config, 'organizationDeleted', { organizationId: organization.id, userId: caller.userId })
  return leaveActiveSession(caller, organization.id)
}

/**
 * The caller's own JWT session switched to no active organization when it names `organizationId`
 * (its claim, which no membership change reaches without a store), after they left or deleted it.
 * A database session needs nothing: its join finds no membership, and a deletion clears the column.
 * @returns The re-sealed session's cookies, or none.
 */
async function leaveActiveSession(caller: Caller, organizationId: string): Promise<OutgoingCookie[]> {
  if (caller.ctx.config.session.strategy !== 'jwt') return []
  const token = await peekJwtToken(caller.ctx)
  if (!token || activeOrganizationOf(token[ACTIVE_ORGANIZATION_CLAIM])?.id !== organizationId) return []
  return (await setSessionField(caller.ctx, activeOrganizationField, undefined)) ?? []
}

/** The organization's members. @throws OrganizationError `not_found`, `forbidden` */
export async function listMembers(caller: Caller, organizationId: unknown): Promise<OrganizationMember[]> {
  const { organization } = await membershipOf(caller, organizationId, { member: ['list'] })
  return (await caller.adapter.listMembers(organization.id)).map(memberShape)
}

/**
 * Sets a member's roles. Nobody changes their own roles but an owner (who may step down while
 * another owner remains); only an owner gives or takes the owner role, or changes an owner's roles.
 * @throws OrganizationError `not_found`, `forbidden`, `invalid_input`, `last_owner`
 */
export async function updateMemberRoles(caller: Caller, organizationId: unknown, userId: unknown, roles: unknown): Promise<OrganizationMember> {
  const { organization, member: mine } = await membershipOf(caller, organizationId, { member: ['update-role'] })
  const target = idOf(userId, 'userId')
  const wanted = checkedRoles(caller, roles)
  const theirs = await caller.adapter.getMember(organization.id, target)
  if (!theirs) throw new OrganizationError('not_found', 'No such member of this organization.')
  const owner = mine.roles.includes(OWNER_ROLE)
  if (target === caller.userId && !owner) throw new OrganizationError('forbidden', 'You cannot change your own roles.')
  if (!owner && (theirs.roles.includes(OWNER_ROLE) || wanted.includes(OWNER_ROLE))) throw new OrganizationError('forbidden', 'Only an owner gives or takes the owner role.')
  const change = await caller.adapter.updateMemberRoles(organization.id, target, wanted, OWNER_ROLE)
  if (change === 'not_found') throw new OrganizationError('not_found', 'No such member of this organization.')
  if (change === 'last_owner') throw new OrganizationError('last_owner', 'The organization would have no owner: make another member owner first.')
  await reachSessions(caller.ctx.config, target)
  await emitEvent(caller.ctx.config, 'memberRoleChanged', { organizationId: organization.id, userId: target, roles: wanted, previous: theirs.roles, by: caller.userId })
  const [found, user] = [await caller.adapter.getMember(organization.id, target), await caller.adapter.getUser(target)]
  if (!found || !user) throw new OrganizationError('not_found', 'No such member of this organization.')
  return memberShape({ ...found, user: { id: user.id, name: user.name ?? null, email: user.email ?? null, image: user.image ?? null } })
}

/**
 * Removes a member (`userId`), or the caller themselves (leaving needs no permission). Only an owner
 * removes an owner; the last owner cannot go.
 * @returns When the caller left: their session's cookies, switched off the organization (JWT without
 *   a store; with one, the change ended their sessions); else none.
 * @throws OrganizationError `not_found`, `forbidden`, `last_owner`
 */
export async function removeMember(caller: Caller, organizationId: unknown, userId: unknown): Promise<OutgoingCookie[]> {
  const target = idOf(userId, 'userId')
  const leaving = target === caller.userId
  const { organization, member: mine } = await membershipOf(caller, organizationId, leaving ? undefined : { member: ['remove'] })
  const theirs = leaving ? mine : await caller.adapter.getMember(organization.id, target)
  if (!theirs) throw new OrganizationError('not_found', 'No such member of this organization.')
  if (!leaving && theirs.roles.includes(OWNER_ROLE) && !mine.roles.includes(OWNER_ROLE)) throw new OrganizationError('forbidden', 'Only an owner removes an owner.')
  const change = await caller.adapter.removeMember(organization.id, target, OWNER_ROLE)
  if (change === 'not_found') throw new OrganizationError('not_found', 'No such member of this organization.')
  if (change === 'last_owner') throw new OrganizationError('last_owner', 'The organization would have no owner: make another member owner first.')
  await reachSessions(caller.ctx.config, target)
  await emitEvent(caller.ctx.config, 'memberRemoved', { organizationId: organization.id, userId: target, by: caller.userId })
  return leaving && !caller.ctx.config.session.store ? leaveActiveSession(caller, organization.id) : []
}

/** A membership change reaches the member's JWT sessions (with a store) by ending them; database sessions see it at once. */
export async function reachSessions(config: ResolvedConfig, userId: string): Promise<void> {
  await endJwtSessions(config, userId, 'membershipChanged')
}

/** Roles a member may hold, deduplicated. @throws OrganizationError `invalid_input` */
export function checkedRoles(caller: Pick<Caller, 'options'>, roles: unknown): string[] {
  const list = typeof roles === 'string' ? [roles] : roles
  if (!Array.isArray(list) || list.length === 0) throw new OrganizationError('invalid_input', `roles must be one or more of ${caller.options.roleNames.join(', ')}.`)
  for (const role of list) {
    if (typeof role !== 'string' || !caller.options.roleNames.includes(role)) throw new OrganizationError('invalid_input', `${JSON.stringify(role)} is not a role here (${caller.options.roleNames.join(', ')}).`)
  }
  return [...new Set(list as string[])]
}

/** `Acme Inc.` → `acme-inc`. */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '')
  if (!slug) throw new OrganizationError('invalid_input', 'The name gives no slug (letters or digits): pass a slug.')
  return slug
}

function checkedFields(input: OrganizationChanges, creating: boolean): Partial<Pick<AdapterOrganization, 'name' | 'slug' | 'logo' | 'metadata'>> {
  if (typeof input !== 'object' || input === null) throw new OrganizationError('invalid_input', 'Pass an object of name, slug, logo, metadata.')
  const fields: Partial<Pick<AdapterOrganization, 'name' | 'slug' | 'logo' | 'metadata'>> = {}
  const { name, slug, logo, metadata } = input
  if (name !== undefined || creating) {
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > 255) throw new OrganizationError('invalid_input', 'name must be 1 to 255 characters.')
    fields.name = name.trim()
  }
  if (slug !== undefined) {
    if (typeof slug !== 'string' || slug.length > 64 || !SLUG.test(slug)) throw new OrganizationError('invalid_input', 'slug must be 1 to 64 lower-case letters, digits and single hyphens, e.g. "acme-inc".')
    fields.slug = slug
  }
  if (logo !== undefined) {
    if (logo !== null && (typeof logo !== 'string' || !/^https:\/\/[^\s"'<>]+$/.test(logo) || logo.length > 2048)) throw new OrganizationError('invalid_input', 'logo must be an https URL (at most 2,048 characters), or null.')
    fields.logo = logo
  }
  if (metadata !== undefined) {
    if (metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata) || JSON.stringify(metadata).length > MAX_METADATA)) throw new OrganizationError('invalid_input', 'metadata must be a JSON object of at most 8 KiB, or null.')
    fields.metadata = metadata
  }
  return fields
}

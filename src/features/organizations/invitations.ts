/**
 * The invitations' engine: a member with `invitation: ['create']` invites an address by mail; the
 * user signed in with that address accepts (and becomes a member, the organization their session's
 * active one) or declines. The mailed token is 32 random bytes, stored as its SHA-256 only, and used
 * once: settling is a compare-and-set on the row's status, done before anything else, so of two
 * requests racing with one token exactly one goes on. Every refusal of a token (unknown, used,
 * canceled, expired, another address) is the same `invalid_invitation`, so the answer tells nothing
 * of which; whether an address belongs to a member is said only to the inviter, who can list members.
 */
import { createHash, randomBytes } from 'node:crypto'
import { emitEvent } from '../../events.js'
import { normalizeEmailAddress } from '../../mail/normalize.js'
import { limitRequest } from '../../security/rate-limit.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { OWNER_ROLE } from './access.js'
import { switchOrganization } from './active.js'
import { idOf, membershipOf, type Caller } from './call.js'
import { OrganizationError } from './errors.js'
import { sendInvitationMail } from './invitation-mail.js'
import { checkedRoles } from './manage.js'
import { invitationShape, membershipShape } from './shapes.js'
import type { AdapterInvitation, AdapterOrganization, Invitation, InvitationForMe, OrganizationMembership } from './types.js'

/** The rate-limit bucket of the invitations' mails (`rateLimitBuckets`). */
export const INVITATION_BUCKET = 'organization-invitation'

/** At most this many mails of one invitation in `INVITATION_MAIL_SECONDS` (the first included). */
export const INVITATION_MAILS_PER_WINDOW = 3

export const INVITATION_MAIL_SECONDS = 3600

/** What inviting takes. */
export interface NewInvitation {
  organizationId: string
  email: string
  /** Default: `organizations.defaultInvitationRole`. */
  roles?: readonly string[] | string | undefined
  /** A team of the organization the invitee joins too (`organizations.teams`). */
  teamId?: string | undefined
}

/** An invitation just made or refreshed, and whether its mail left. */
export interface SentInvitation extends Invitation {
  mailed: boolean
}

/** What accepting gives: the organization with the new member's roles, and the session's cookies (JWT). */
export interface AcceptedInvitation {
  organization: OrganizationMembership
  cookies: OutgoingCookie[]
}

/** The one answer to every token that cannot be used, whatever the reason. */
export function invalidInvitation(): OrganizationError {
  return new OrganizationError('invalid_invitation', 'This invitation cannot be used: it was used, declined, canceled or has expired, or it was sent to another address than the one you are signed in with.')
}

/** The SHA-256 (hex) of a token, as the adapter stores it. */
export function tokenHashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * Invites `email` to the organization, or refreshes a pending invitation to it there (a new token and
 * expiry, the roles given; the old link stops working), and mails the link.
 * @throws OrganizationError `not_found`, `forbidden` (no `invitation: ['create']`, or the owner role by a non-owner), `invalid_input`, `already_member`, `limit_reached`, `rate_limited`
 */
export async function invite(caller: Caller, input: NewInvitation): Promise<SentInvitation> {
  const { organization, member } = await membershipOf(caller, input?.organizationId, { invitation: ['create'] })
  const email = addressOf(input.email)
  const roles = checkedRoles(caller, input.roles ?? [caller.options.defaultInvitationRole])
  if (roles.includes(OWNER_ROLE) && !member.roles.includes(OWNER_ROLE)) throw new OrganizationError('forbidden', 'Only an owner invites with the owner role.')
  const { adapter } = caller
  const teamId = await teamOf(caller, organization.id, input.teamId)
  // The adapter finds the address whatever its letter case (a provider may have stored it otherwise): two indexed reads, not the member list.
  const invitee = await adapter.getUserByEmail(email)
  if (invitee && (await adapter.getMember(organization.id, invitee.id))) throw new OrganizationError('already_member', `${email} belongs to a member of this organization already.`)
  const pending = await adapter.listInvitations(organization.id)
  const existing = pending.find((invitation) => invitation.email === email)
  const now = caller.ctx.now * 1000
  if (!existing) {
    const standing = pending.filter((invitation) => invitation.expiresAt.getTime() > now).length
    if ((await adapter.countMembers(organization.id)) + standing >= caller.options.membersPerOrganization) {
      throw new OrganizationError('limit_reached', 'The organization has membersPerOrganization members and pending invitations.')
    }
  }
  const token = randomBytes(32).toString('base64url')
  const sentAt = new Date(now)
  const expiresAt = new Date(now + caller.options.invitationExpiresIn * 1000)
  let invitation: AdapterInvitation
  if (existing) {
    await limitMails(caller, existing.id)
    if (!(await adapter.updateInvitationToken(existing.id, tokenHashOf(token), sentAt, expiresAt, roles))) throw notFound()
    invitation = { ...existing, roles, tokenHash: tokenHashOf(token), sentAt, expiresAt }
  } else {
    invitation = await adapter.createInvitation({ organizationId: organization.id, email, roles, teamId, tokenHash: tokenHashOf(token), inviterId: caller.userId, expiresAt, sentAt })
    await limitMails(caller, invitation.id)
  }
  return mailAndTell(caller, organization, invitation, token)
}

/** A new token for a pending invitation, mailed again. @throws OrganizationError `not_found`, `forbidden`, `rate_limited` */
export async function resend(caller: Caller, invitationId: unknown): Promise<SentInvitation> {
  const { invitation, organization } = await pendingInvitationOf(caller, invitationId, { invitation: ['create'] })
  await limitMails(caller, invitation.id)
  const token = randomBytes(32).toString('base64url')
  const now = caller.ctx.now * 1000
  const sentAt = new Date(now)
  const expiresAt = new Date(now + caller.options.invitationExpiresIn * 1000)
  if (!(await caller.adapter.updateInvitationToken(invitation.id, tokenHashOf(token), sentAt, expiresAt))) throw notFound()
  return mailAndTell(caller, organization, { ...invitation, tokenHash: tokenHashOf(token), sentAt, expiresAt }, token)
}

/** Cancels a pending invitation: its link stops working. @throws OrganizationError `not_found`, `forbidden` */
export async function cancel(caller: Caller, invitationId: unknown): Promise<void> {
  const { invitation } = await pendingInvitationOf(caller, invitationId, { invitation: ['cancel'] })
  if (!(await caller.adapter.settleInvitation(invitation.id, 'canceled', { expect: 'pending' }))) throw notFound()
  await emitEvent(caller.ctx.config, 'invitationCanceled', { invitationId: invitation.id, organizationId: invitation.organizationId, by: caller.userId })
}

/** The organization's pending invitations (expired ones too, which a resend renews). @throws OrganizationError `not_found`, `forbidden` */
export async function list(caller: Caller, organizationId: unknown): Promise<Invitation[]> {
  const { organization } = await membershipOf(caller, organizationId, { invitation: ['list'] })
  return (await caller.adapter.listInvitations(organization.id)).map(invitationShape)
}

/**
 * The pending, unexpired invitations to the caller's address, when it is verified (an unverified
 * address proves no mailbox: whoever typed it would see another's invitations); else none.
 */
export async function listForMe(caller: Caller): Promise<InvitationForMe[]> {
  const user = await caller.adapter.getUser(caller.userId)
  const email = user?.emailVerified ? addressOrNull(user.email) : null
  if (!email) return []
  const found: InvitationForMe[] = []
  for (const invitation of await caller.adapter.listInvitationsForEmail(email)) {
    const organization = await caller.adapter.getOrganization({ id: invitation.organizationId })
    if (!organization) continue
    const { id, name, slug, logo } = organization
    found.push({ id: invitation.id, organization: { id, name, slug, logo }, roles: [...invitation.roles], expiresAt: invitation.expiresAt.toISOString() })
  }
  return found
}

/**
 * The invitation of `token` and its organization, when the caller may use it: pending, unexpired,
 * to the caller's address. What the accept page shows; it changes nothing.
 * @throws OrganizationError `invalid_invitation` (one message whatever the reason)
 */
export async function invitationFor(caller: Caller, token: unknown): Promise<{ invitation: AdapterInvitation; organization: AdapterOrganization }> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 128) throw invalidInvitation()
  const invitation = await caller.adapter.getInvitationByTokenHash(tokenHashOf(token))
  if (!invitation || invitation.status !== 'pending' || invitation.expiresAt.getTime() <= caller.ctx.now * 1000) throw invalidInvitation()
  const user = await caller.adapter.getUser(caller.userId)
  if (addressOrNull(user?.email) !== invitation.email) throw invalidInvitation()
  const organization = await caller.adapter.getOrganization({ id: invitation.organizationId })
  if (!organization) throw invalidInvitation()
  return { invitation, organization }
}

/**
 * Accepts the invitation of `token`: settles it first (the compare-and-set that makes the token single
 * use), then makes the caller a member with its roles and the organization their session's active one.
 * @throws OrganizationError `invalid_invitation`, `limit_reached` (`organizationsPerUser`), `not_signed_in`
 */
export async function accept(caller: Caller, token: unknown): Promise<AcceptedInvitation> {
  const { invitation, organization } = await invitationFor(caller, token)
  const { adapter, options, userId } = caller
  const already = await adapter.getMember(organization.id, userId)
  // Checked before the token is used up, so a user at the limit can leave an organization and come back with the same link.
  if (!already && (await adapter.listOrganizationsOfUser(userId)).length >= options.organizationsPerUser) {
    throw new OrganizationError('limit_reached', `You belong to ${options.organizationsPerUser} organizations, the most one user may (organizationsPerUser): leave one to accept.`)
  }
  if (!(await adapter.settleInvitation(invitation.id, 'accepted', { expect: 'pending' }))) throw invalidInvitation()
  // Made a member meanwhile (addMember by the app): the invitation is used, the membership stands as it is.
  const added = already ? null : await adapter.addMember({ organizationId: organization.id, userId, roles: invitation.roles })
  // The invitation's team, unless it was deleted meanwhile (the membership stands without it).
  if (invitation.teamId && options.teams) await adapter.addTeamMember(organization.id, invitation.teamId, userId)
  const { organization: active, cookies } = await switchOrganization(caller, organization.id)
  if (added) await emitEvent(caller.ctx.config, 'memberAdded', { organizationId: organization.id, userId, roles: added.roles, by: invitation.inviterId })
  await emitEvent(caller.ctx.config, 'invitationAccepted', { invitationId: invitation.id, organizationId: organization.id, userId })
  return { organization: active ?? membershipShape(organization, (added ?? already)!), cookies }
}

/** Declines the invitation of `token`. @throws OrganizationError `invalid_invitation` */
export async function decline(caller: Caller, token: unknown): Promise<void> {
  const { invitation } = await invitationFor(caller, token)
  if (!(await caller.adapter.settleInvitation(invitation.id, 'declined', { expect: 'pending' }))) throw invalidInvitation()
  await emitEvent(caller.ctx.config, 'invitationDeclined', { invitationId: invitation.id, organizationId: invitation.organizationId, userId: caller.userId })
}

/** A pending invitation of an organization the caller is in, with `permissions` there; else `not_found` (the same for another's). */
async function pendingInvitationOf(caller: Caller, invitationId: unknown, permissions: { invitation: string[] }): Promise<{ invitation: AdapterInvitation; organization: AdapterOrganization }> {
  const invitation = await caller.adapter.getInvitation(idOf(invitationId, 'invitationId'))
  if (!invitation || invitation.status !== 'pending') throw notFound()
  let found: { organization: AdapterOrganization }
  try {
    found = await membershipOf(caller, invitation.organizationId, permissions)
  } catch (error) {
    // Another organization's invitation is answered as one that does not exist.
    if (error instanceof OrganizationError && error.code === 'not_found') throw notFound()
    throw error
  }
  return { invitation, organization: found.organization }
}

function notFound(): OrganizationError {
  return new OrganizationError('not_found', 'No such pending invitation among your organizations\'.')
}

/** Counts one mail of the invitation. @throws OrganizationError `rate_limited` */
async function limitMails(caller: Caller, invitationId: string): Promise<void> {
  // Counted per invitation whatever `rateLimit` says: each call mails an address the caller chose.
  const retryAfter = await limitRequest(caller.ctx.config, INVITATION_BUCKET, invitationId, { attempts: INVITATION_MAILS_PER_WINDOW, windowSeconds: INVITATION_MAIL_SECONDS })
  if (retryAfter !== undefined) throw new OrganizationError('rate_limited', `This invitation was mailed ${INVITATION_MAILS_PER_WINDOW} times within the hour: try again in ${retryAfter} s.`, retryAfter)
}

async function mailAndTell(caller: Caller, organization: AdapterOrganization, invitation: AdapterInvitation, token: string): Promise<SentInvitation> {
  const inviter = await caller.adapter.getUser(caller.userId)
  const mailed = await sendInvitationMail(caller.ctx, caller.options, invitation.email, token, organization, { id: caller.userId, name: inviter?.name ?? null, email: inviter?.email ?? null }, invitation.expiresAt)
  const shaped = invitationShape(invitation)
  await emitEvent(caller.ctx.config, 'invitationCreated', { invitation: shaped, by: caller.userId })
  return { ...shaped, mailed }
}

/** The invitation's team, checked to be the organization's. @throws OrganizationError `invalid_input` (teams off), `not_found` */
async function teamOf(caller: Caller, organizationId: string, teamId: unknown): Promise<string | null> {
  if (teamId === undefined || teamId === null || teamId === '') return null
  if (!caller.options.teams) throw new OrganizationError('invalid_input', 'Teams are off: set organizations.teams to invite into a team.')
  const team = await caller.adapter.getTeam(organizationId, idOf(teamId, 'teamId'))
  if (!team) throw new OrganizationError('not_found', 'No such team in this organization.')
  return team.id
}

/** @throws OrganizationError `invalid_input` */
function addressOf(value: unknown): string {
  try {
    return normalizeEmailAddress(value)
  } catch {
    throw new OrganizationError('invalid_input', 'email must be one e-mail address, e.g. ada@example.com.')
  }
}

function addressOrNull(value: unknown): string | null {
  try {
    return normalizeEmailAddress(value)
  } catch {
    return null
  }
}

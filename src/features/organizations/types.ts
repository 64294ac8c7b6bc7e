/**
 * What the organizations wing adds to the shared interfaces, by module augmentation: its option on
 * `PortcullisConfig`, its adapter methods on `Adapter`, its events, the session's active
 * organization on `SessionUser` and `AdapterSession`; and the shapes its functions return.
 */
import type { Awaitable, ISODateString } from '../../types.js'
import type { Permissions, Statements } from '../roles/access.js'

/** An organization as the adapter stores it. */
export interface AdapterOrganization {
  id: string
  name: string
  /** Unique: lower-case letters, digits and single hyphens, 1 to 64 characters. */
  slug: string
  logo: string | null
  /** The app's own data (JSON), or null. */
  metadata: Record<string, unknown> | null
  createdAt: Date
}

/** A user's membership of an organization. */
export interface AdapterMember {
  id: string
  organizationId: string
  userId: string
  /** Their roles there (at least one). */
  roles: string[]
  createdAt: Date
}

/** A member with what lists show of their user. */
export interface AdapterMemberWithUser extends AdapterMember {
  user: { id: string; name: string | null; email: string | null; image: string | null }
}

/** Where an invitation stands. */
export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'canceled'

/** An invitation as the adapter stores it (never its token: the token's SHA-256). */
export interface AdapterInvitation {
  id: string
  organizationId: string
  /** The invited address, normalized as the e-mail sign-in normalizes it (lower case). */
  email: string
  roles: string[]
  teamId: string | null
  /** SHA-256 of the token the mail carries, hex. */
  tokenHash: string
  status: InvitationStatus
  inviterId: string | null
  createdAt: Date
  expiresAt: Date
  /** When the mail was last sent (a resend moves it). */
  sentAt: Date
}

/** An invitation as the functions and JSON routes give it (never its token or the token's hash). */
export interface Invitation {
  id: string
  organizationId: string
  email: string
  roles: string[]
  /** The team the invitee joins with the organization (`organizations.teams`), or null. */
  teamId: string | null
  status: InvitationStatus
  inviterId: string | null
  createdAt: ISODateString
  expiresAt: ISODateString
  sentAt: ISODateString
}

/** A pending invitation of the signed-in user's address, with what they need to recognize it. */
export interface InvitationForMe {
  id: string
  organization: { id: string; name: string; slug: string; logo: string | null }
  roles: string[]
  expiresAt: ISODateString
}

/** A team inside an organization. */
export interface AdapterTeam {
  id: string
  organizationId: string
  name: string
  createdAt: Date
}

/** A team as the functions and routes give it. */
export interface OrganizationTeam {
  id: string
  organizationId: string
  name: string
  createdAt: ISODateString
}

/** What a membership change did (`updateMemberRoles`, `removeMember`). */
export type MembershipChange = 'done' | 'not_found' | 'last_owner'

/** The active organization as the session carries it: its id and the user's roles there. */
export interface ActiveOrganization {
  readonly id: string
  /** The user's roles in it, as of the session's read (database) or of the switch (JWT). */
  readonly roles: readonly string[]
}

/** An organization as the server-side functions and JSON routes give it, with the caller's roles in it. */
export interface Organization {
  id: string
  name: string
  slug: string
  logo: string | null
  metadata: Record<string, unknown> | null
  createdAt: ISODateString
}

/** An organization of the signed-in user, with their roles there. */
export interface OrganizationMembership extends Organization {
  roles: string[]
}

/** A member as the functions and routes give it. */
export interface OrganizationMember {
  id: string
  userId: string
  roles: string[]
  createdAt: ISODateString
  user: { name: string | null; email: string | null; image: string | null }
}

/** The mail the organizations wing sends (an invitation), as `organizations.sendMail` receives it. */
export interface OrganizationMail {
  kind: 'organization-invitation'
  to: string
  subject: string
  text: string
  html: string
  /** The link that accepts the invitation (it carries the token: never log it). */
  url: string
  organization: { id: string; name: string; slug: string }
  /** Who invited, as their session names them. */
  inviter: { id: string; name: string | null; email: string | null }
}

/**
 * The `organizations` option: organizations of users, members with roles there, an active
 * organization in the session, invitations by e-mail, teams. See docs/organizations.md.
 */
export interface OrganizationsOptions<S extends Statements = Statements> {
  /** Your resources and their actions, beside the wing's own (`organizationStatements`). */
  statements?: S | undefined
  /**
   * Roles besides the built-in `owner` (every permission), or in place of `admin` (every one but
   * deleting the organization) and `member` (none of the wing's).
   */
  roles?: Readonly<Record<string, Permissions<S & typeof import('./access.js').organizationStatements>>> | undefined
  /** Whether a signed-in user may create organizations, or who may. Default true. */
  allowCreate?: boolean | ((user: { id: string; email: string | null }) => Awaitable<boolean>) | undefined
  /** How many organizations one user may belong to. Default 100. */
  organizationsPerUser?: number | undefined
  /** How many members one organization may have (pending invitations count). Default 1,000. */
  membersPerOrganization?: number | undefined
  /** Teams inside organizations. Default false. */
  teams?: boolean | { maxTeamsPerOrganization?: number | undefined } | undefined
  /** Seconds an invitation can be accepted. Default 7 days. */
  invitationExpiresIn?: number | undefined
  /** The role of an invitation that names none. Default `member`. */
  defaultInvitationRole?: string | undefined
  /** The SMTP server of the invitations (a URL, nodemailer options, or `'console'`). Default: a configured e-mail provider's. */
  server?: string | Record<string, unknown> | undefined
  /** The sender of the invitations; default: that e-mail provider's. */
  from?: string | undefined
  /** Sends the invitations yourself instead. */
  sendMail?: ((mail: OrganizationMail) => Awaitable<void>) | undefined
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * Off by default. Organizations: users belong to several, with roles in each; the session's
     * active organization answers `hasPermission`; invitations by e-mail; teams. Needs the
     * organizations migration. See docs/organizations.md.
     */
    organizations?: OrganizationsOptions | boolean | undefined
  }
}

declare module '../../types.js' {
  interface SessionUser {
    /**
     * With the `organizations` option: the session's active organization and the user's roles
     * there, or null. Database sessions read the roles on every read; JWT sessions carry them as of
     * the switch (a membership change ends them with a session store). No callback changes it.
     */
    activeOrganization?: ActiveOrganization | null | undefined
  }

  interface AdapterSession {
    /** The session's active organization (the organizations migration's column); null or absent for none. */
    activeOrganizationId?: string | null
  }

  // A membership change ends every JWT session of the member when there is a session store.
  interface SessionRevocationCauses {
    membershipChanged: true
  }

  interface Adapter {
    /** Creates the organization and its first member (the owner) in one transaction; null when the slug is taken. */
    createOrganization?(organization: Omit<AdapterOrganization, 'id' | 'createdAt'>, owner: { userId: string; roles: readonly string[] }): Promise<{ organization: AdapterOrganization; member: AdapterMember } | null>
    getOrganization?(by: { id: string } | { slug: string }): Promise<AdapterOrganization | null>
    /** `slug_taken` when another organization has the new slug; null when there is no such organization. */
    updateOrganization?(id: string, changes: Partial<Pick<AdapterOrganization, 'name' | 'slug' | 'logo' | 'metadata'>>): Promise<AdapterOrganization | 'slug_taken' | null>
    /** Deletes the organization, its members, invitations, teams and API keys, and clears it as any session's active one. */
    deleteOrganization?(id: string): Promise<boolean>
    /** The user's organizations with their membership, oldest membership first. */
    listOrganizationsOfUser?(userId: string): Promise<{ organization: AdapterOrganization; member: AdapterMember }[]>
    /** Adds a member; null when they are one already. */
    addMember?(member: { organizationId: string; userId: string; roles: readonly string[] }): Promise<AdapterMember | null>
    getMember?(organizationId: string, userId: string): Promise<AdapterMember | null>
    /** The organization's members, oldest first. */
    listMembers?(organizationId: string): Promise<AdapterMemberWithUser[]>
    countMembers?(organizationId: string): Promise<number>
    /**
     * Sets a member's roles; `last_owner` (nothing changed) when they hold `ownerRole`, the new roles
     * do not, and no other member holds it: checked and written in one transaction.
     */
    updateMemberRoles?(organizationId: string, userId: string, roles: readonly string[], ownerRole: string): Promise<MembershipChange>
    /** Removes a member (and their team memberships there); `last_owner` likewise. */
    removeMember?(organizationId: string, userId: string, ownerRole: string): Promise<MembershipChange>
    /** Teams (`organizations.teams`): a team of the organization. */
    createTeam?(team: { organizationId: string; name: string }): Promise<AdapterTeam>
    /** The organization's team of this id, or null (a team of another organization is none). */
    getTeam?(organizationId: string, teamId: string): Promise<AdapterTeam | null>
    listTeams?(organizationId: string): Promise<AdapterTeam[]>
    countTeams?(organizationId: string): Promise<number>
    renameTeam?(organizationId: string, teamId: string, name: string): Promise<AdapterTeam | null>
    /** Deletes the team and its memberships; false when the organization has no such team. */
    deleteTeam?(organizationId: string, teamId: string): Promise<boolean>
    /** Adds a member of the organization to its team: `not_member` when they are none, `not_found` without such a team. */
    addTeamMember?(organizationId: string, teamId: string, userId: string): Promise<'added' | 'already' | 'not_member' | 'not_found'>
    removeTeamMember?(organizationId: string, teamId: string, userId: string): Promise<boolean>
    listTeamMembers?(organizationId: string, teamId: string): Promise<{ userId: string; name: string | null; email: string | null }[]>
    /** Stores a new invitation (status `pending`). */
    createInvitation?(invitation: Omit<AdapterInvitation, 'id' | 'createdAt' | 'status'>): Promise<AdapterInvitation>
    getInvitation?(id: string): Promise<AdapterInvitation | null>
    /** The invitation whose token has this SHA-256 (hex), whatever its status. */
    getInvitationByTokenHash?(tokenHash: string): Promise<AdapterInvitation | null>
    /** The organization's pending invitations (expired ones too), oldest first. */
    listInvitations?(organizationId: string): Promise<AdapterInvitation[]>
    /** The pending, unexpired invitations to this (normalized) address, oldest first. */
    listInvitationsForEmail?(email: string): Promise<AdapterInvitation[]>
    /**
     * Sets the invitation's status when it is still `expect.expect` (a compare-and-set: one UPDATE …
     * WHERE status = 'pending'); true when this call changed it. Of two racing calls, one wins.
     */
    settleInvitation?(id: string, status: Exclude<InvitationStatus, 'pending'>, expect: { expect: 'pending' }): Promise<boolean>
    /** A pending invitation's new token, sending time and expiry (a resend), and optionally roles; false when it is no longer pending. */
    updateInvitationToken?(id: string, tokenHash: string, sentAt: Date, expiresAt: Date, roles?: readonly string[]): Promise<boolean>
    /** Deletes the invitations that expired before `before`, whatever their status (the background prune); how many. */
    pruneInvitations?(before: Date): Promise<number>
  }

  interface EventsOptions {
    organizationCreated?: ((message: { organization: Organization; userId: string }) => Awaitable<void>) | undefined
    organizationUpdated?: ((message: { organization: Organization; userId: string }) => Awaitable<void>) | undefined
    organizationDeleted?: ((message: { organizationId: string; userId: string }) => Awaitable<void>) | undefined
    /** A user joined (created the organization, accepted an invitation, or was added by `addMember`). */
    memberAdded?: ((message: { organizationId: string; userId: string; roles: readonly string[]; by: string | null }) => Awaitable<void>) | undefined
    /** A member left or was removed (`by`: who removed them; their own id when they left). */
    memberRemoved?: ((message: { organizationId: string; userId: string; by: string | null }) => Awaitable<void>) | undefined
    memberRoleChanged?: ((message: { organizationId: string; userId: string; roles: readonly string[]; previous: readonly string[]; by: string | null }) => Awaitable<void>) | undefined
    teamCreated?: ((message: { organizationId: string; teamId: string; name: string; userId: string }) => Awaitable<void>) | undefined
    teamDeleted?: ((message: { organizationId: string; teamId: string; userId: string }) => Awaitable<void>) | undefined
    teamMemberAdded?: ((message: { organizationId: string; teamId: string; userId: string; by: string }) => Awaitable<void>) | undefined
    teamMemberRemoved?: ((message: { organizationId: string; teamId: string; userId: string; by: string }) => Awaitable<void>) | undefined
    /** The session's active organization changed (null: none). */
    activeOrganizationChanged?: ((message: { userId: string; organizationId: string | null }) => Awaitable<void>) | undefined
    /** An invitation was made, refreshed (a second invitation to the same address) or resent, and its mail sent (or tried: `invitation` is as stored). Never carries the token. */
    invitationCreated?: ((message: { invitation: Invitation; by: string }) => Awaitable<void>) | undefined
    /** The invited user accepted (and became a member: `memberAdded` comes first). */
    invitationAccepted?: ((message: { invitationId: string; organizationId: string; userId: string }) => Awaitable<void>) | undefined
    invitationDeclined?: ((message: { invitationId: string; organizationId: string; userId: string }) => Awaitable<void>) | undefined
    /** A member canceled a pending invitation (`by`). */
    invitationCanceled?: ((message: { invitationId: string; organizationId: string; by: string }) => Awaitable<void>) | undefined
  }
}

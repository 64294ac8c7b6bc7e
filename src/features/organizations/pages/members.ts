/**
 * The built-in members page of one organization (GET `/organizations/members?organizationId=…`): its
 * members with their roles; per member, a form to change their role and one to remove them, each
 * shown only when the viewer's roles there grant it and the engine's rules would allow it (nobody
 * but an owner changes their own roles or touches the owner role); the viewer's own "Leave"; the
 * pending invitations with Resend and Cancel, and the invite form; the organization's settings and
 * its deletion for those who may. The routes check every rule again:
 * a hidden form is a courtesy, not the guard. No script; never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import { OWNER_ROLE } from '../access.js'
import type { Invitation, OrganizationMember, OrganizationMembership } from '../types.js'

/** What the viewer's roles in the organization grant, as `access.can` answered. */
export interface MembersPageGrants {
  updateRole: boolean
  remove: boolean
  update: boolean
  delete: boolean
  /** `invitation: ['create']`: the invite form, and resending. */
  invite?: boolean | undefined
  /** `invitation: ['cancel']`. */
  cancelInvitation?: boolean | undefined
}

/** What the members page needs. */
export interface MembersPageProps {
  /** The organization, with the viewer's roles there. */
  organization: OrganizationMembership
  members: readonly OrganizationMember[]
  /** The pending invitations, when the viewer may list them (`invitation: ['list']`). */
  invitations?: readonly Invitation[] | undefined
  /** This page's own URL, where the invitation forms come back to. */
  pageUrl?: string | undefined
  viewerId: string
  /** The roles a member may hold (`organizations.roles` and the built-in ones). */
  roleNames: readonly string[]
  grants: MembersPageGrants
  /** Why the last form was refused. */
  error?: string | undefined
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the members page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * const organization = { id: 'o1', name: 'Acme', slug: 'acme', logo: null, metadata: null, createdAt: '2027-01-01T00:00:00.000Z', roles: ['owner'] }
 * const grants = { updateRole: true, remove: true, update: true, delete: true }
 * renderMembersPage({ organization, members: [], viewerId: 'u1', roleNames: ['owner', 'admin', 'member'], grants, csrfToken: 'token', basePath: '/api/auth', theme: {} })
 */
export function renderMembersPage(props: MembersPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Members page: basePath must be a path or an http(s) URL.')
  const { organization } = props
  const count = props.members.length
  const body = html`<h1>${organization.name}</h1>
${props.error ? html`<p class="alert" role="alert">${props.error}</p>` : ''}
<p><code>${organization.slug}</code> · your roles: ${organization.roles.join(', ')}</p>
<h2>Members</h2>
<p>${count === 1 ? 'One member.' : `${count} members.`}</p>
<ul class="sessions" data-members>${props.members.map((member) => memberRow(member, props))}</ul>
${invitationsSpot(props)}
${props.grants.update ? settingsForm(props) : ''}
${props.grants.delete ? deleteForm(props) : ''}
<p class="links" style="margin-top:1.5rem"><a href="${props.basePath}/organizations">← All organizations</a></p>`
  return renderLayout({ title: `${organization.name}: members`, theme: props.theme, body, home: props.homeUrl })
}

function memberRow(member: OrganizationMember, props: MembersPageProps): SafeHtml {
  const self = member.userId === props.viewerId
  const viewerOwns = props.organization.roles.includes(OWNER_ROLE)
  // The engine's rules (manage.ts), mirrored so that no form is offered that would be refused.
  const touchesOwner = member.roles.includes(OWNER_ROLE) && !viewerOwns
  // The only owner can neither step down nor leave (409 last_owner): they are told why instead.
  const onlyOwner = self && viewerOwns && props.members.filter((each) => each.roles.includes(OWNER_ROLE)).length === 1
  const mayChange = props.grants.updateRole && !touchesOwner && (!self || (viewerOwns && !onlyOwner))
  const mayRemove = props.grants.remove && !touchesOwner && !self
  const label = member.user.name ?? member.user.email ?? member.userId
  return html`<li data-member-id="${member.userId}">
<strong>${label}</strong>${self ? html` <small style="display:inline">(you)</small>` : ''}
${member.user.email && member.user.email !== label ? html`<small>${member.user.email}</small>` : ''}
<small data-roles>roles: ${member.roles.join(', ')}</small>
${mayChange ? roleForm(member, props, viewerOwns) : ''}
${mayRemove ? memberForm(props, '/organizations/members/remove', member.userId, 'Remove') : ''}
${self && !onlyOwner ? memberForm(props, '/organizations/leave', undefined, 'Leave the organization') : ''}
${onlyOwner ? html`<small data-only-owner>You are its only owner: make another member owner before you step down or leave.</small>` : ''}
</li>`
}

function roleForm(member: OrganizationMember, props: MembersPageProps, viewerOwns: boolean): SafeHtml {
  const offered = viewerOwns ? props.roleNames : props.roleNames.filter((role) => role !== OWNER_ROLE)
  const id = `roles-${member.id}`
  return html`<form method="post" action="${props.basePath}/organizations/members/role">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${props.organization.id}">
<input type="hidden" name="userId" value="${member.userId}">
<div><label for="${id}">Role</label><select id="${id}" name="roles">${offered.map((role) => html`<option value="${role}"${member.roles[0] === role ? html` selected` : ''}>${role}</option>`)}</select></div>
<button type="submit" class="secondary">Change role</button>
</form>`
}

function memberForm(props: MembersPageProps, path: string, userId: string | undefined, label: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${props.organization.id}">
${userId !== undefined ? html`<input type="hidden" name="userId" value="${userId}">` : ''}
<button type="submit" class="secondary">${label}</button>
</form>`
}

// The organization's pending invitations and the invite form, for those whose roles allow them. The
// forms post to the invitation routes, which come back here (`callbackUrl`, checked same-origin there).
function invitationsSpot(props: MembersPageProps): SafeHtml {
  const { invitations, grants } = props
  if (!invitations && !grants.invite) return html``
  const now = Date.now()
  return html`<section data-invitations>
<h2>Invitations</h2>
${invitations ? (invitations.length === 0 ? html`<p>No pending invitations.</p>` : html`<ul class="sessions">${invitations.map((invitation) => invitationRow(invitation, props, now))}</ul>`) : ''}
${grants.invite ? inviteForm(props) : ''}
</section>`
}

function invitationRow(invitation: Invitation, props: MembersPageProps, now: number): SafeHtml {
  const expired = Date.parse(invitation.expiresAt) <= now
  return html`<li data-invitation-id="${invitation.id}">
<strong>${invitation.email}</strong>
<small>roles: ${invitation.roles.join(', ')} · ${expired ? 'expired' : html`expires <time datetime="${invitation.expiresAt}">${invitation.expiresAt.slice(0, 10)}</time>`}</small>
${props.grants.invite ? invitationForm(props, '/organizations/invitations/resend', invitation.id, expired ? 'Send a new link' : 'Resend') : ''}
${props.grants.cancelInvitation ? invitationForm(props, '/organizations/invitations/cancel', invitation.id, 'Cancel') : ''}
</li>`
}

function invitationForm(props: MembersPageProps, path: string, invitationId: string, label: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="invitationId" value="${invitationId}">
${props.pageUrl ? html`<input type="hidden" name="callbackUrl" value="${props.pageUrl}">` : ''}
<button type="submit" class="secondary">${label}</button>
</form>`
}

function inviteForm(props: MembersPageProps): SafeHtml {
  // Only an owner invites with the owner role (invitations.ts): the others are not offered it.
  const offered = props.organization.roles.includes(OWNER_ROLE) ? props.roleNames : props.roleNames.filter((role) => role !== OWNER_ROLE)
  return html`<form method="post" action="${props.basePath}/organizations/invitations">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${props.organization.id}">
${props.pageUrl ? html`<input type="hidden" name="callbackUrl" value="${props.pageUrl}">` : ''}
<div><label for="invite-email">Invite by e-mail</label><input id="invite-email" name="email" type="email" required maxlength="320" autocomplete="off"></div>
<div><label for="invite-role">Role</label><select id="invite-role" name="roles">${offered.map((role) => html`<option value="${role}"${role === 'member' ? html` selected` : ''}>${role}</option>`)}</select></div>
<button type="submit">Send the invitation</button>
</form>`
}

function settingsForm(props: MembersPageProps): SafeHtml {
  const { organization } = props
  return html`<h2>Settings</h2>
<form method="post" action="${props.basePath}/organizations/update">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${organization.id}">
<div><label for="name">Name</label><input id="name" name="name" required maxlength="255" value="${organization.name}"></div>
<div><label for="slug">Slug</label><input id="slug" name="slug" required maxlength="64" pattern="[a-z0-9]+(-[a-z0-9]+)*" value="${organization.slug}"></div>
<div><label for="logo">Logo (https URL, optional)</label><input id="logo" name="logo" type="url" maxlength="2048" value="${organization.logo ?? ''}"></div>
<button type="submit" class="secondary">Save settings</button>
</form>`
}

function deleteForm(props: MembersPageProps): SafeHtml {
  return html`<h2>Delete</h2>
<form method="post" action="${props.basePath}/organizations/delete">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${props.organization.id}">
<small class="hint">Deletes its members, invitations and teams. This cannot be undone.</small>
<button type="submit" class="secondary">Delete the organization</button>
</form>`
}

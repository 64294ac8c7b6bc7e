/**
 * The invitations' pages: the accept page (GET `/organizations/invitation?token=…`), which shows
 * the organization and two CSRF-checked POST forms and accepts nothing by itself (a link previewer
 * or a HEAD request uses nothing up); a notice (declined, or an invitation that cannot be used, in
 * one wording whatever the reason); and the signed-in user's pending invitations (GET `/invitations`).
 * Every value is escaped by the `html` template; the pages run no script.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { InvitationForMe } from '../types.js'

/** What every invitation page needs. */
export interface InvitationPageBase {
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

/** What the accept page needs. */
export interface AcceptPageProps extends InvitationPageBase {
  organization: { name: string; logo: string | null }
  roles: readonly string[]
  inviter: string | null
  expiresAt: Date
  token: string
  csrfToken: string
}

/**
 * Renders the accept page: the organization, the roles, and the Accept and Decline forms.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderAcceptPage({ organization: { name: 'Acme', logo: null }, roles: ['member'], inviter: 'Ada', expiresAt: new Date(), token: 't', csrfToken: 'c', basePath: '/api/auth', theme: {} })
 */
export function renderAcceptPage(props: AcceptPageProps): string {
  checkBase(props)
  const body = html`<h1>Join ${props.organization.name}</h1>
<p>${props.inviter ? `${props.inviter} invited you` : 'You are invited'} to join <strong>${props.organization.name}</strong> as ${props.roles.join(', ')}.</p>
<p><small>The invitation can be used until ${props.expiresAt.toUTCString()}.</small></p>
${form(props, '/organizations/invitation/accept', 'Accept', '')}
${form(props, '/organizations/invitation/decline', 'Decline', 'secondary')}`
  return renderLayout({ title: `Join ${props.organization.name}`, theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders a notice: a heading and a message (an invitation declined, or one that cannot be used).
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderInvitationNotice({ heading: 'Invitation declined', message: 'You declined.', basePath: '/api/auth', theme: {} })
 */
export function renderInvitationNotice(props: InvitationPageBase & { heading: string; message: string; role?: 'alert' | 'status' }): string {
  checkBase(props)
  const body = html`<h1>${props.heading}</h1>
<p class="alert" role="${props.role ?? 'alert'}">${props.message}</p>`
  return renderLayout({ title: props.heading, theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the signed-in user's pending invitations: each organization, its roles and expiry (the
 * mailed link accepts: the page holds no token).
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderMyInvitationsPage({ invitations: [], basePath: '/api/auth', theme: {} })
 */
export function renderMyInvitationsPage(props: InvitationPageBase & { invitations: readonly InvitationForMe[] }): string {
  checkBase(props)
  const count = props.invitations.length
  const body = html`<h1>Invitations</h1>
<p>${count === 0 ? 'You have no pending invitations.' : count === 1 ? 'You have one pending invitation.' : `You have ${count} pending invitations.`}${count > 0 ? ' Open the link of its e-mail to accept or decline.' : ''}</p>
${count > 0 ? html`<ul class="sessions">${props.invitations.map((invitation) => html`<li data-invitation-id="${invitation.id}"><strong>${invitation.organization.name}</strong> <small>as ${invitation.roles.join(', ')} · until ${invitation.expiresAt.slice(0, 10)}</small></li>`)}</ul>` : ''}`
  return renderLayout({ title: 'Invitations', theme: props.theme, body, home: props.homeUrl })
}

function form(props: AcceptPageProps, path: string, label: string, kind: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="token" value="${props.token}">
<button type="submit"${kind ? html` class="${kind}"` : ''}>${label}</button>
</form>`
}

function checkBase(props: InvitationPageBase): void {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Invitation page: basePath must be a path or an http(s) URL.')
}

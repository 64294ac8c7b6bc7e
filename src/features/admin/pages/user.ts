/**
 * One user's page (GET `/admin/user?id=…`): who they are and how they sign in, then a form per
 * action the instance offers (name and address, roles, ending their sessions, a ban or lifting it,
 * removing their second factor, mailing a reset link, deleting them), and, with the audit log on,
 * their recent events. Every button is a CSRF-checked POST form; it works without JavaScript.
 */
import type { SessionInfo, Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl } from '../../../pages/theme.js'
import type { AdminUser } from '../types.js'
import { renderAdminLayout, shownDate } from './layout.js'

/** One audit event as the page lists it. */
export interface AdminAuditLine {
  at: Date
  type: string
  outcome: 'success' | 'failure'
  method: string | null
  reason: string | null
  /** Who did it when not the user (an administrator's id). */
  actorId: string | null
  ipAddress: string | null
}

/** What one user's page needs. */
export interface AdminUserPageProps {
  /** The routes' base, e.g. `/api/auth`: the forms post to `<basePath>/admin/user/…`. */
  basePath: string
  csrfToken: string
  user: AdminUser
  /** The configured roles, a checkbox each. */
  roleNames: readonly string[]
  /** The forms the page shows: the caller's roles grant the action, the wing it needs is on, the sessions are countable. */
  offers: { update: boolean; setRoles: boolean; endSessions: boolean; ban: boolean; resetTwoFactor: boolean; resetLink: boolean; delete: boolean; impersonate?: boolean | undefined }
  /** The user's sessions (`listUserSessions`), shown in the sessions section; undefined: not listed. */
  sessions?: readonly SessionInfo[] | undefined
  /** The user's recent audit events (the audit option), or why they cannot be shown; undefined: the log is off. */
  audit?: { events: readonly AdminAuditLine[] } | { unavailable: string } | undefined
  /** What was wrong with the last action. */
  error?: string | undefined
  /** What the last action did. */
  notice?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/** The expiries a ban form offers, in seconds ('' until lifted). */
const BAN_EXPIRIES: readonly (readonly [string, string])[] = [['', 'Until lifted'], ['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days']]

/**
 * Renders one user's page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderAdminUserPage({ basePath: '/api/auth', csrfToken: 'c', user, roleNames: ['admin', 'user'], offers: { update: true, setRoles: true, endSessions: true, ban: true, resetTwoFactor: false, resetLink: true, delete: true }, theme: {} })
 */
export function renderAdminUserPage(props: AdminUserPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Admin user page: basePath must be a path or an http(s) URL.')
  const { user } = props
  const actions = actionSections(props).filter((section) => section !== '')
  const body = html`<p><a href="${props.basePath}/admin">← All users</a></p>
<h1>${user.email ?? user.id}</h1>
${props.error ? html`<div class="alert" role="alert">${props.error}</div>` : ''}
${props.notice ? html`<div class="alert" role="status">${props.notice}</div>` : ''}
${details(user)}
${actions.length === 0 ? html`<p class="muted">Your roles let you see this user, not change them.</p>` : html`<div class="actions">
${actions}
</div>`}
${auditSection(props.audit)}`
  return renderAdminLayout({ title: user.email ?? user.id, theme: props.theme, body, homeUrl: props.homeUrl })
}

/** The action forms the instance offers, in order. */
function actionSections(props: AdminUserPageProps): (SafeHtml | '')[] {
  const { user, offers } = props
  return [
    offers.update ? profileForm(props) : '',
    offers.setRoles ? rolesForm(props) : '',
    offers.endSessions ? actionForm(props, 'sessions', 'Sessions', html`<p>${sessionsText(user.sessions)} Ending them signs the user out on every device.</p>${sessionList(props.sessions)}`, 'End every session') : '',
    offers.ban ? banSection(props) : '',
    !offers.resetTwoFactor ? '' : user.twoFactor ? actionForm(props, 'two-factor', 'Second factor', html`<p>For a user who lost their authenticator app: their password alone signs them in until they set it up again.</p>`, 'Remove the second factor') : html`<section><h2>Second factor</h2><p class="muted">Not set up.</p></section>`,
    offers.resetLink && user.email ? actionForm(props, 'reset-link', 'Password', html`<p>Mails the user a link to set a new password. You never see the link.</p>`, 'Mail a password reset link') : '',
    offers.impersonate ? impersonateForm(props) : '',
    offers.delete ? deleteForm(props) : '',
  ]
}

function details(user: AdminUser): SafeHtml {
  return html`<dl>
<dt>User id</dt><dd><code>${user.id}</code></dd>
<dt>Name</dt><dd>${user.name ?? html`<span class="muted">none</span>`}</dd>
<dt>Address</dt><dd>${user.email ?? html`<span class="muted">none</span>`}${user.email ? (user.emailVerified ? ` (confirmed ${shownDate(user.emailVerified)})` : ' (not confirmed)') : ''}</dd>
<dt>Roles</dt><dd>${user.roles.join(', ')}</dd>
<dt>Sign-in methods</dt><dd>${user.signInMethods.length === 0 ? html`<span class="muted">none yet</span>` : user.signInMethods.join(', ')}</dd>
<dt>Sessions</dt><dd>${user.sessions ?? html`<span class="muted">not recorded (JWT sessions)</span>`}</dd>
<dt>Second factor</dt><dd>${user.twoFactor ? 'on' : 'off'}</dd>
<dt>Ban</dt><dd>${user.ban ? `Banned since ${shownDate(user.ban.bannedAt)}, ${user.ban.expiresAt ? `until ${shownDate(user.ban.expiresAt)}` : 'until lifted'}` : html`<span class="muted">none</span>`}</dd>
</dl>`
}

/** Each session: the browser, from where, since and last seen. */
function sessionList(sessions: readonly SessionInfo[] | undefined): SafeHtml | '' {
  if (!sessions || sessions.length === 0) return ''
  return html`<ul class="sessions">${sessions.map(
    (session) => html`<li>${session.userAgent ?? 'Unknown browser'}<small>${session.ipAddress ?? 'unknown address'} · ${session.lastSeenAt ? `last seen ${shownDate(session.lastSeenAt)}` : `until ${shownDate(session.expires)}`}</small></li>`,
  )}</ul>`
}

function sessionsText(sessions: number | null): string {
  return sessions === 1 ? '1 session.' : `${sessions ?? 0} sessions.`
}

/** The hidden fields of every form: the CSRF token and the user's id. */
function hidden(props: AdminUserPageProps): SafeHtml {
  return html`<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="id" value="${props.user.id}">`
}

/** A section with one button that posts to `<basePath>/admin/user/<action>`. */
function actionForm(props: AdminUserPageProps, action: string, heading: string, text: SafeHtml, button: string): SafeHtml {
  return html`<section><h2>${heading}</h2>${text}
<form method="post" action="${props.basePath}/admin/user/${action}">
${hidden(props)}
<button type="submit" class="secondary">${button}</button>
</form></section>`
}

function impersonateForm(props: AdminUserPageProps): SafeHtml {
  return html`<section><h2>Impersonate</h2><p>Sign in as this user for a while, to see what they see. Their password, address, second factor and passkeys stay out of reach; the audit log names you.</p>
<form method="post" action="${props.basePath}/admin/user/impersonate">
${hidden(props)}
<button type="submit" class="secondary">Impersonate this user</button>
</form></section>`
}

function profileForm(props: AdminUserPageProps): SafeHtml {
  const { user } = props
  return html`<section><h2>Name and address</h2>
<form method="post" action="${props.basePath}/admin/user/update">
${hidden(props)}
<div><label for="admin-name">Name</label><input id="admin-name" name="name" value="${user.name ?? ''}" maxlength="200" autocomplete="off"></div>
<div><label for="admin-email">E-mail address</label><input id="admin-email" type="email" name="email" value="${user.email ?? ''}" autocomplete="off" required></div>
<div class="checks"><label><input type="checkbox" name="emailVerified" value="yes"> The address is confirmed (I checked it myself)</label></div>
<button type="submit" class="secondary">Save name and address</button>
</form></section>`
}

function rolesForm(props: AdminUserPageProps): SafeHtml {
  return html`<section><h2>Roles</h2>
<form method="post" action="${props.basePath}/admin/user/roles">
${hidden(props)}
<fieldset class="checks"><legend class="muted">None ticked: the default roles.</legend>
${props.roleNames.map((role) => html`<label><input type="checkbox" name="role:${role}" value="yes"${props.user.roles.includes(role) ? html` checked` : ''}> ${role}</label>`)}
</fieldset>
<button type="submit" class="secondary">Save roles</button>
</form></section>`
}

function banSection(props: AdminUserPageProps): SafeHtml {
  const { ban } = props.user
  if (ban) {
    return actionForm(props, 'unban', 'Ban', html`<p>Banned since ${shownDate(ban.bannedAt)}, ${ban.expiresAt ? `until ${shownDate(ban.expiresAt)}` : 'until lifted'}.${ban.reason ? ` Reason: ${ban.reason}` : ''}</p>`, 'Lift the ban')
  }
  return html`<section class="danger"><h2>Ban</h2><p>Ends every session, and refuses every sign-in and API key of the user.</p>
<form method="post" action="${props.basePath}/admin/user/ban">
${hidden(props)}
<div><label for="admin-ban-reason">Reason (only administrators see it)</label><input id="admin-ban-reason" name="reason" maxlength="500" autocomplete="off"></div>
<div><label for="admin-ban-expires">For</label><select id="admin-ban-expires" name="expiresIn">${BAN_EXPIRIES.map(([value, text]) => html`<option value="${value}">${text}</option>`)}</select></div>
<button type="submit" class="secondary">Ban</button>
</form></section>`
}

function deleteForm(props: AdminUserPageProps): SafeHtml {
  return html`<section class="danger"><h2>Delete</h2><p>Deletes the user and everything that signs them in, and signs them out everywhere. It cannot be undone.</p>
<form method="post" action="${props.basePath}/admin/user/delete">
${hidden(props)}
<div class="checks"><label><input type="checkbox" name="confirm" value="yes" required> Delete this user for good</label></div>
<button type="submit" class="secondary">Delete the user</button>
</form></section>`
}

function auditSection(audit: AdminUserPageProps['audit']): SafeHtml | '' {
  if (audit === undefined) return ''
  if ('unavailable' in audit) return html`<h2>Recent events</h2><p class="muted">${audit.unavailable}</p>`
  if (audit.events.length === 0) return html`<h2>Recent events</h2><p class="muted">None recorded.</p>`
  return html`<h2>Recent events</h2><div class="scroll"><table>
<thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Outcome</th><th scope="col">Method</th><th scope="col">By</th><th scope="col">From</th></tr></thead>
<tbody>${audit.events.map(
    (event) => html`<tr><td class="when">${shownDate(event.at)}</td><td>${event.type}${event.reason ? html` <span class="muted">(${event.reason})</span>` : ''}</td><td>${event.outcome}</td><td>${event.method ?? ''}</td><td>${event.actorId ? html`<code>${event.actorId}</code>` : html`<span class="muted">the user</span>`}</td><td>${event.ipAddress ?? ''}</td></tr>`,
  )}</tbody>
</table></div>`
}

/**
 * The users list (GET `/admin`): a search box, a page of users, each row with their address,
 * name, roles, sign-in methods, sessions, second factor and ban, linking their page, and the
 * previous and next pages. Plain links and one GET form: it works without JavaScript.
 */
import type { Theme } from '../../../types.js'
import { html } from '../../../pages/html.js'
import { isSafePageUrl } from '../../../pages/theme.js'
import type { AdminUser } from '../types.js'
import { renderAdminLayout, shownDate } from './layout.js'

/** What the users list needs. */
export interface AdminUsersPageProps {
  /** The routes' base, e.g. `/api/auth`: the links go to `<basePath>/admin…`. */
  basePath: string
  /** The search as typed ('' for none). */
  search: string
  users: readonly AdminUser[]
  /** How many users match. */
  total: number
  offset: number
  /** Users per page. */
  limit: number
  /** What was done (a user deleted). */
  notice?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the users list.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderAdminUsersPage({ basePath: '/api/auth', search: '', users: [], total: 0, offset: 0, limit: 20, theme: {} })
 */
export function renderAdminUsersPage(props: AdminUsersPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Admin users page: basePath must be a path or an http(s) URL.')
  const list = `${props.basePath}/admin`
  const pageLink = (offset: number) => `${list}?${new URLSearchParams({ ...(props.search && { q: props.search }), ...(offset > 0 && { offset: String(offset) }) })}`.replace(/\?$/, '')
  const first = props.users.length === 0 ? 0 : props.offset + 1
  const last = props.offset + props.users.length
  const body = html`<h1>Users</h1>
${props.notice ? html`<div class="alert" role="status">${props.notice}</div>` : ''}
<form class="search" method="get" action="${list}" role="search">
<div><label for="admin-search">Search by address, name or user id</label>
<input id="admin-search" type="search" name="q" value="${props.search}" maxlength="255"></div>
<button type="submit">Search</button>
</form>
<p class="muted">${summary(props, first, last)}</p>
${props.users.length === 0 ? '' : html`<div class="scroll"><table>
<thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Roles</th><th scope="col">Sign-in methods</th><th scope="col">Sessions</th><th scope="col">Second factor</th><th scope="col">Ban</th></tr></thead>
<tbody>${props.users.map(
    (user) => html`<tr>
<td class="address"><a href="${list}/user?${new URLSearchParams({ id: user.id })}">${user.email ?? user.id}</a>${user.email && !user.emailVerified ? html` <span class="muted">(not confirmed)</span>` : ''}</td>
<td>${user.name ?? ''}</td>
<td>${user.roles.join(', ')}</td>
<td>${user.signInMethods.length === 0 ? html`<span class="muted">none</span>` : user.signInMethods.join(', ')}</td>
<td>${user.sessions ?? html`<span class="muted">not recorded</span>`}</td>
<td>${user.twoFactor ? 'on' : 'off'}</td>
<td>${user.ban ? `banned${user.ban.expiresAt ? ` until ${shownDate(user.ban.expiresAt)}` : ''}` : ''}</td>
</tr>`,
  )}</tbody>
</table></div>`}
<nav class="pager" aria-label="Pages">${props.offset > 0 ? html`<a href="${pageLink(previousOffset(props))}" rel="prev">← Previous page</a>` : html`<span></span>`}${last < props.total ? html`<a href="${pageLink(last)}" rel="next">Next page →</a>` : ''}</nav>`
  return renderAdminLayout({ title: 'Users', theme: props.theme, body, homeUrl: props.homeUrl })
}

/** The line above the table: how many match, and which of them this page shows. */
function summary(props: AdminUsersPageProps, first: number, last: number): string {
  if (props.total === 0) return props.search ? 'No user matches.' : 'No users yet.'
  if (props.users.length === 0) return `No users on this page: ${props.total} in all.`
  return `Users ${first}–${last} of ${props.total}${props.search ? ' matching' : ''}.`
}

/** Where "previous" goes: the page before, or the last page for an offset past the end (an edited URL). */
function previousOffset(props: AdminUsersPageProps): number {
  const lastPage = Math.floor(Math.max(0, props.total - 1) / props.limit) * props.limit
  return Math.max(0, Math.min(props.offset - props.limit, lastPage))
}

/**
 * The built-in organizations page (GET `/organizations`): the signed-in user's organizations with
 * their roles, a switcher (one CSRF-checked POST form per organization to `/organizations/active`,
 * the active one marked), and a form to create one. The page runs no script and is never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { OrganizationMembership } from '../types.js'

/** What the organizations page needs. */
export interface OrganizationsPageProps {
  organizations: readonly OrganizationMembership[]
  /** The session's active organization, or null. */
  activeOrganizationId: string | null
  /** Why the last form was refused. */
  error?: string | undefined
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the organizations page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderOrganizationsPage({ organizations: [], activeOrganizationId: null, csrfToken: 'token', basePath: '/api/auth', theme: {} })
 */
export function renderOrganizationsPage(props: OrganizationsPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Organizations page: basePath must be a path or an http(s) URL.')
  const count = props.organizations.length
  const body = html`<h1>Organizations</h1>
${props.error ? html`<p class="alert" role="alert">${props.error}</p>` : ''}
<p>${count === 0 ? 'You belong to no organization yet.' : count === 1 ? 'You belong to one organization.' : `You belong to ${count} organizations.`}</p>
${count > 0 ? html`<ul class="sessions">${props.organizations.map((organization) => organizationRow(organization, props))}</ul>` : ''}
${props.activeOrganizationId !== null ? switchForm(props, '', 'Use no organization') : ''}
<h2>Create an organization</h2>
${createForm(props)}`
  return renderLayout({ title: 'Organizations', theme: props.theme, body, home: props.homeUrl })
}

function organizationRow(organization: OrganizationMembership, props: OrganizationsPageProps): SafeHtml {
  const active = organization.id === props.activeOrganizationId
  return html`<li data-organization-id="${organization.id}"${active ? html` data-active aria-current="true"` : ''}>
<strong>${organization.name}</strong>${active ? html` <small style="display:inline;color:var(--link)">· active</small>` : ''}
<small><code>${organization.slug}</code> · your roles: ${organization.roles.join(', ')}</small>
<small><a href="${props.basePath}/organizations/members?organizationId=${encodeURIComponent(organization.id)}">Members and settings</a></small>
${active ? '' : switchForm(props, organization.id, 'Switch to it')}
</li>`
}

function switchForm(props: OrganizationsPageProps, organizationId: string, label: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}/organizations/active">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${organizationId}">
<button type="submit" class="secondary">${label}</button>
</form>`
}

function createForm(props: OrganizationsPageProps): SafeHtml {
  return html`<form method="post" action="${props.basePath}/organizations">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="name">Name</label><input id="name" name="name" required maxlength="255" autocomplete="organization" placeholder="Acme Inc."></div>
<div><label for="slug">Slug (optional)</label><input id="slug" name="slug" maxlength="64" pattern="[a-z0-9]+(-[a-z0-9]+)*" autocomplete="off" placeholder="acme-inc"><span class="hint">Lower-case letters, digits and hyphens; made from the name when left empty.</span></div>
<button type="submit">Create organization</button>
</form>`
}

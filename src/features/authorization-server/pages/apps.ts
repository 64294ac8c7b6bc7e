/**
 * The built-in "apps with access" page (GET `/oauth-apps`): the apps the signed-in user has granted
 * access to their account, what each may do, and a CSRF-checked button to remove each one's access.
 * The page runs no script and is never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { AuthorizedApp } from '../types.js'

/** What the apps page needs. */
export interface AppsPageProps {
  apps: readonly AuthorizedApp[]
  /** Said once after a removal. */
  notice?: string | undefined
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the apps page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderAppsPage({ apps: [], csrfToken: 't', basePath: '/api/auth', theme: {} })
 */
export function renderAppsPage(props: AppsPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Apps page: basePath must be a path or an http(s) URL.')
  const body = html`<h1>Apps with access</h1>
${props.notice ? html`<p class="alert" role="status">${props.notice}</p>` : ''}
${props.apps.length === 0 ? html`<p>No app has access to your account.</p>` : html`<ul class="sessions">${props.apps.map((app) => appRow(app, props))}</ul>`}`
  return renderLayout({ title: 'Apps with access', theme: props.theme, body, home: props.homeUrl })
}

function appRow(app: AuthorizedApp, props: AppsPageProps): SafeHtml {
  return html`<li data-client-id="${app.clientId}">
<strong>${app.name}</strong>
<small>${app.scopes.length > 0 ? `may: ${app.scopes.join(', ')}` : 'no scopes'} · since ${app.grantedAt.slice(0, 10)}</small>
<form method="post" action="${props.basePath}/oauth-apps/revoke">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="clientId" value="${app.clientId}">
<button type="submit" class="secondary">Remove access</button>
</form>
</li>`
}

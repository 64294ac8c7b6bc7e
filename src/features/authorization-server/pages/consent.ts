/**
 * The built-in consent page (GET `/oauth-interaction/:uid`): which app asks, for what, on whose
 * account, with Allow and Deny. Both buttons are one CSRF-checked POST form to the same address;
 * the page runs no script and is never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { ConsentDetails } from '../consent-details.js'

/** What the consent page needs: the request's details (consent-details.ts), and the page's own. */
export interface ConsentPageProps extends ConsentDetails {
  /** Who is signed in: their address or name. */
  signedInAs: string
  /** Where the form posts: `/api/auth/oauth-interaction/<uid>`. */
  action: string
  csrfToken: string
  theme: Theme
}

// What each of OpenID Connect's scopes lets the app do, in the user's words.
const OIDC_SCOPE_TEXT: Readonly<Record<string, string>> = {
  openid: 'Know who you are on this site',
  profile: 'See your name and picture',
  email: 'See your e-mail address',
  offline_access: 'Keep its access while you are away (until you remove it)',
}

/**
 * Renders the consent page.
 * @throws {TypeError} If `action` is not a `/` path or an http(s) URL.
 * @example
 * renderConsentPage({ clientName: 'Acme CLI', homepage: undefined, documentUrl: undefined, returnsTo: 'an app on this device', identity: ['openid'], apis: [], granted: [], signedInAs: 'ada@example.com', action: '/api/auth/oauth-interaction/x', csrfToken: 't', theme: {} })
 */
export function renderConsentPage(props: ConsentPageProps): string {
  if (!isSafePageUrl(props.action)) throw new TypeError('Consent page: action must be a path or an http(s) URL.')
  const body = html`<h1>${props.clientName} wants to use your account</h1>
${props.documentUrl ? html`<p>It is described by <code>${props.documentUrl}</code>: its name is its own claim, <strong>${new URL(props.documentUrl).host}</strong> is who vouches for it. Allow it only if you know it.</p>` : html``}
${props.homepage ? html`<p><a href="${props.homepage}" rel="noopener noreferrer" target="_blank">${props.clientName}'s page</a></p>` : html``}
<p>Signed in as <strong>${props.signedInAs}</strong>. It asks to:</p>
<ul class="sessions">${props.identity.map(scopeItem)}${props.apis.flatMap((api) => api.scopes.map((scope) => apiScopeItem(api.name, scope)))}</ul>
${props.granted.length > 0 ? html`<p><small>You allowed it before: ${props.granted.join(', ')}.</small></p>` : html``}
<p>After you answer, you go back to <strong>${props.returnsTo}</strong>.</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<button type="submit" name="decision" value="allow" autofocus>Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p><small>You can remove its access at any time from the apps with access to your account.</small></p>`
  return renderLayout({ title: `Allow ${props.clientName}?`, theme: props.theme, body })
}

function scopeItem(scope: string): SafeHtml {
  return html`<li>${OIDC_SCOPE_TEXT[scope] ?? scope}</li>`
}

function apiScopeItem(api: string, scope: string): SafeHtml {
  return html`<li>Use <code>${scope}</code> on ${api}</li>`
}

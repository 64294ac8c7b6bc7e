/**
 * The built-in consent page (GET `/oauth-interaction/:uid`): which app asks, for what, on whose
 * account, with Allow and Deny. Both buttons are one CSRF-checked POST form to the same address;
 * the page runs no script and is never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'

/** What the consent page needs. */
export interface ConsentPageProps {
  clientName: string
  /** The scopes asked for that the user has not granted yet, OpenID Connect's and every API's. */
  scopes: readonly string[]
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
 * renderConsentPage({ clientName: 'Acme CLI', scopes: ['openid'], signedInAs: 'ada@example.com', action: '/api/auth/oauth-interaction/x', csrfToken: 't', theme: {} })
 */
export function renderConsentPage(props: ConsentPageProps): string {
  if (!isSafePageUrl(props.action)) throw new TypeError('Consent page: action must be a path or an http(s) URL.')
  const body = html`<h1>${props.clientName} wants to use your account</h1>
<p>Signed in as <strong>${props.signedInAs}</strong>. It asks to:</p>
<ul class="sessions">${props.scopes.map(scopeItem)}</ul>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<button type="submit" name="decision" value="allow" autofocus>Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p><small>You can remove its access at any time from the apps with access to your account.</small></p>`
  return renderLayout({ title: `Allow ${props.clientName}?`, theme: props.theme, body })
}

function scopeItem(scope: string): SafeHtml {
  const text = OIDC_SCOPE_TEXT[scope]
  return text ? html`<li>${text}</li>` : html`<li>Use <code>${scope}</code> on this site's API</li>`
}

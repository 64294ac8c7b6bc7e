/**
 * The impersonation's pages: the banner every built-in page shows during one (who is being
 * impersonated, and the way out), and its own page (GET `/admin/impersonation`), whose one button
 * (a CSRF-checked POST) stops it.
 */
import type { Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { renderLayout } from '../../../pages/theme.js'

/** The banner: `who` is the impersonated user as shown (an address or a name). */
export function impersonationBanner(basePath: string, who: string): SafeHtml {
  return html`<p class="impersonating" role="status">You are signed in as <strong>${who}</strong> by impersonation. <a href="${basePath}/admin/impersonation">Stop impersonating</a></p>`
}

/** What the impersonation page needs. */
export interface ImpersonationPageProps {
  basePath: string
  csrfToken: string
  /** The impersonated user as shown; undefined when the session is no impersonation. */
  who?: string | undefined
  /** When it ends. */
  expires?: Date | undefined
  error?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/** Renders the impersonation page. */
export function renderImpersonationPage(props: ImpersonationPageProps): string {
  const body =
    props.who === undefined
      ? html`<h1>Impersonation</h1>
${props.error ? html`<div class="alert" role="alert">${props.error}</div>` : ''}
<p>You are not impersonating anyone.</p>`
      : html`<h1>Impersonation</h1>
${props.error ? html`<div class="alert" role="alert">${props.error}</div>` : ''}
<p>You are signed in as <strong>${props.who}</strong>${props.expires ? html` until ${props.expires.toISOString().replace('T', ' ').slice(0, 16)} UTC` : ''}. Their password, address, second factor and passkeys cannot be changed from here.</p>
<form method="post" action="${props.basePath}/admin/impersonation/stop">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<button type="submit">Stop impersonating</button>
</form>`
  return renderLayout({ title: 'Impersonation', theme: props.theme, body, home: props.homeUrl })
}

/**
 * The page the SAML response is posted through once more. The identity provider's POST is
 * cross-site, so the browser sends no SameSite=Lax cookie with it, and the sign-in cookie that binds
 * the response to the request this browser made would be missing. Posted again from this page, on
 * this site, the cookie comes along. The page carries the response back to the same address and
 * nothing else; without scripts, its button does the same.
 */
import { html } from '../../../pages/html.js'
import { renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'

export function renderContinuePage(opts: { action: string; samlResponse: string; relayState: string | undefined; theme: Theme; script: { src: string; integrity: string } }): string {
  const body = html`<h1>Signing you in</h1>
<form method="post" action="${opts.action}" data-saml-continue>
<input type="hidden" name="SAMLResponse" value="${opts.samlResponse}">
${opts.relayState !== undefined && html`<input type="hidden" name="RelayState" value="${opts.relayState}">`}
<input type="hidden" name="continued" value="1">
<noscript><p>Your organization's identity provider has answered.</p></noscript>
<button type="submit">Continue</button>
</form>`
  return renderLayout({ title: 'Signing you in', theme: opts.theme, body, script: opts.script })
}

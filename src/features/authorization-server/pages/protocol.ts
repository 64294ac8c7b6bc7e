/**
 * The pages oidc-provider's own endpoints show (its `*Source` options and `renderError`), in the
 * site's theme: the device flow's "enter the code" and "confirm" pages and its success page, the
 * sign-out question and its answer, and an error that cannot be sent back to the client. `form` is
 * oidc-provider's own markup (its hidden fields and its anti-forgery token); everything else here is
 * escaped. The pages run no script.
 */
import { html, raw } from '../../../pages/html.js'
import { renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'

/** The device flow's first page: the code the CLI or TV shows. */
export function renderUserCodePage(theme: Theme, form: string, failed: string | undefined): string {
  return renderLayout({
    title: 'Connect a device',
    theme,
    body: html`<h1>Connect a device</h1>
${failed ? html`<p class="alert" role="alert">${failed}</p>` : html`<p>Enter the code your device shows.</p>`}
${raw(form)}
<label for="user_code">Code</label>
<input id="user_code" name="user_code" form="op.deviceInputForm" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<button type="submit" form="op.deviceInputForm">Continue</button>`,
  })
}

/** The device flow's confirmation: the code again, and which app asks. */
export function renderUserCodeConfirmPage(theme: Theme, form: string, clientName: string, userCode: string): string {
  return renderLayout({
    title: 'Connect a device',
    theme,
    body: html`<h1>Connect ${clientName}?</h1>
<p>Check that your device shows this code:</p>
<p class="code"><strong>${userCode}</strong></p>
<p>If it does not, or you did not start this, abort.</p>
${raw(form)}
<button type="submit" form="op.deviceConfirmForm" autofocus>Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Abort</button>`,
    css: '.code{font-size:1.6em;text-align:center;letter-spacing:.1em}',
  })
}

/** The device flow's end. */
export function renderDeviceDonePage(theme: Theme, clientName: string): string {
  return renderLayout({ title: 'Device connected', theme, body: html`<h1>Device connected</h1><p>${clientName} is signed in. You can close this page and go back to your device.</p>` })
}

/** RP-initiated logout's question: sign out of this site too? */
export function renderLogoutPage(theme: Theme, form: string, site: string): string {
  return renderLayout({
    title: 'Sign out',
    theme,
    body: html`<h1>Sign out of ${site}?</h1>
${raw(form)}
<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
  })
}

/** After RP-initiated logout, when the app gave no address to go back to. */
export function renderLoggedOutPage(theme: Theme): string {
  return renderLayout({ title: 'Signed out', theme, body: html`<h1>Signed out</h1><p>You are signed out.</p>` })
}

/** An authorization request that cannot be answered to its client (an unknown client, a redirect URI it did not register). */
export function renderProtocolErrorPage(theme: Theme, error: string, description: string | undefined): string {
  return renderLayout({
    title: 'Sign-in request refused',
    theme,
    body: html`<h1>This sign-in request was refused</h1>
<p>The app that sent you here made a request this site cannot accept, so you were not sent back to it.</p>
<p><code>${error}</code>${description ? html`: ${description}` : ''}</p>`,
  })
}

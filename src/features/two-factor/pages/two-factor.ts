/**
 * The second factor's built-in pages: the second step of a sign-in (GET `/two-factor`), and the
 * signed-in user's settings (GET `/two-factor/setup`): enrol with a QR code and a first code, the
 * recovery codes shown once, and, when enrolled, new recovery codes or turning it off, each with a
 * current code. Every form is CSRF-protected; every value is escaped but the QR code's SVG, which
 * the server drew.
 */
import type { Theme } from '../../../types.js'
import { html, raw, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** What the second step of a sign-in needs. */
export interface TwoFactorPageProps {
  /** Where the code is posted, e.g. `/api/auth/two-factor`. */
  action: string
  csrfToken: string
  /** A message for people (a wrong code). */
  error?: string | undefined
  /** The sign-in page, to start again. */
  signInUrl: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

/** What the settings page shows, by state. */
export type TwoFactorSetupPageProps = {
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  csrfToken: string
  error?: string | undefined
  /** Where "Done" leads. */
  next: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
} & (
  | { state: 'enrol'; qrCode: string; secret: string }
  | { state: 'codes'; recoveryCodes: readonly string[] }
  | { state: 'enrolled'; recoveryCodesLeft: number }
)

function alert(error: string | undefined): SafeHtml | null {
  return error ? html`<div class="alert" role="alert">${error}</div>` : null
}

function codeField(id: string, label: string, hint: string, autofocus = false): SafeHtml {
  return html`<div><label for="${id}">${label}</label>
<input id="${id}" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="32" required${autofocus ? raw(' autofocus') : ''}>
<small class="hint">${hint}</small></div>`
}

function hidden(csrfToken: string): SafeHtml {
  return html`<input type="hidden" name="csrfToken" value="${csrfToken}">`
}

/**
 * Renders the second step of a sign-in.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderTwoFactorPage({ action: '/api/auth/two-factor', csrfToken: 'c', signInUrl: '/api/auth/signin', theme: {} })
 */
export function renderTwoFactorPage(props: TwoFactorPageProps): string {
  if (!isSafePageUrl(props.action)) throw new TypeError('Two-factor page: the form action must be a path or an http(s) URL.')
  const body = html`<h1>Two-step verification</h1>
${alert(props.error)}
<form method="post" action="${props.action}">
${hidden(props.csrfToken)}
${codeField('two-factor-code', 'Code from your authenticator app', 'Lost your device? Enter one of your recovery codes instead.', true)}
<button type="submit">Verify</button>
</form>
<p><a href="${props.signInUrl}">Cancel and sign in again</a></p>`
  return renderLayout({ title: 'Two-step verification', theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the second factor's settings page.
 * @throws {TypeError} If `basePath` or `next` is not an http(s) URL or a `/` path.
 * @example
 * renderTwoFactorSetupPage({ state: 'enrolled', recoveryCodesLeft: 10, basePath: '/api/auth', csrfToken: 'c', next: '/', theme: {} })
 */
export function renderTwoFactorSetupPage(props: TwoFactorSetupPageProps): string {
  if (!isSafePageUrl(props.basePath) || !isSafePageUrl(props.next)) throw new TypeError('Two-factor settings page: basePath and next must be paths or http(s) URLs.')
  let body: SafeHtml
  switch (props.state) {
    case 'enrol':
      body = html`<h1>Set up two-step verification</h1>
${alert(props.error)}
<p>Scan this code with an authenticator app (1Password, Google Authenticator, Microsoft Authenticator, Authy…), then enter the six-digit code it shows.</p>
<div class="qr">${raw(props.qrCode)}</div>
<p>Cannot scan it? Enter this key in the app:</p>
<code class="secret">${groups(props.secret)}</code>
<form method="post" action="${props.basePath}/two-factor/setup">
${hidden(props.csrfToken)}
${codeField('two-factor-setup-code', 'Code from the app', 'Six digits; a new one appears every 30 seconds.')}
<button type="submit">Turn on</button>
</form>
<p><a href="${props.next}">Not now</a></p>`
      break
    case 'codes':
      body = html`<h1>Save your recovery codes</h1>
<p>Each code signs you in once if you lose your authenticator app. Keep them somewhere safe: they will not be shown again.</p>
<ul class="codes" data-recovery-codes>${props.recoveryCodes.map((code) => html`<li>${code}</li>`)}</ul>
<p><a class="button" href="${props.next}">I have saved them</a></p>`
      break
    case 'enrolled':
      body = html`<h1>Two-step verification is on</h1>
${alert(props.error)}
<p>${props.recoveryCodesLeft === 1 ? 'You have 1 recovery code left.' : `You have ${props.recoveryCodesLeft} recovery codes left.`}</p>
<form method="post" action="${props.basePath}/two-factor/recovery-codes">
${hidden(props.csrfToken)}
${codeField('two-factor-regenerate-code', 'Code from your app', 'To replace your recovery codes with ten new ones.')}
<button type="submit">New recovery codes</button>
</form>
<div class="divider">or</div>
<form method="post" action="${props.basePath}/two-factor/disable">
${hidden(props.csrfToken)}
${codeField('two-factor-disable-code', 'Code from your app, or a recovery code', 'To turn two-step verification off.')}
<button type="submit" class="secondary">Turn off</button>
</form>
<p><a href="${props.next}">Done</a></p>`
      break
  }
  return renderLayout({ title: 'Two-step verification', theme: props.theme, body, home: props.homeUrl })
}

/** The key in groups of four, as apps show it. */
function groups(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ')
}

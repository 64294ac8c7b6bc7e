/**
 * The confirmation page (GET `/account/confirm`): before a sensitive action, the signed-in user
 * proves who they are again, with what they have: a password, a second-factor code (forms posting
 * to `/account/confirm`), a new sign-in with one of their OAuth accounts or a passkey (the
 * provider's round trip, which comes back to `callbackUrl`), or a mailed link ("Send me a link",
 * posting to `/account/confirm/email`). Every form is CSRF-protected.
 */
import type { ConfirmationMethod } from '../../../composition/index.js'
import type { Theme } from '../../../types.js'
import { html, raw, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** A new sign-in that confirms: an OAuth provider's (a form posting to its `/signin/:id`), or the sign-in page's passkey. */
export interface ConfirmationRoundTrip {
  readonly label: string
  /** The form's action (POST, OAuth) or the link (GET, the sign-in page). */
  readonly href: string
  readonly post: boolean
}

/** What the confirmation page needs. */
export interface ConfirmPageProps {
  /** Where the typed confirmations post, e.g. `/api/auth/account/confirm`. */
  action: string
  csrfToken: string
  callbackUrl: string
  methods: readonly ConfirmationMethod[]
  roundTrips: readonly ConfirmationRoundTrip[]
  /** Where "Send me a link" posts, when the user may confirm by a mailed link. */
  mailLinkAction?: string | undefined
  error?: string | undefined
  /** What happened (the link was sent). */
  notice?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the confirmation page.
 * @throws {TypeError} If `action` or a round trip's URL is not an http(s) URL or a `/` path.
 * @example
 * renderConfirmPage({ action: '/api/auth/account/confirm', csrfToken: 'c', callbackUrl: '/account', methods: [], roundTrips: [], theme: {} })
 */
export function renderConfirmPage(props: ConfirmPageProps): string {
  const actions = [props.action, ...props.roundTrips.map((trip) => trip.href), ...(props.mailLinkAction === undefined ? [] : [props.mailLinkAction])]
  if (actions.some((action) => !isSafePageUrl(action))) throw new TypeError('Confirmation page: a form action must be a path or an http(s) URL.')
  const none = props.methods.length === 0 && props.roundTrips.length === 0 && props.mailLinkAction === undefined
  const body = html`<h1>Confirm it is you</h1>
<p>This needs a recent sign-in. Confirm who you are to go on.</p>
${props.error ? html`<div class="alert" role="alert">${props.error}</div>` : ''}
${props.notice ? html`<div class="alert" role="status">${props.notice}</div>` : ''}
${props.methods.map((method, index) => methodForm(props, method, index === 0))}
${props.roundTrips.map((trip) => roundTripForm(props, trip))}
${props.mailLinkAction === undefined ? '' : mailLinkForm(props, props.mailLinkAction)}
${none ? html`<p>Your account has no way to confirm here. Sign out and sign in again, then come back.</p>` : ''}`
  return renderLayout({ title: 'Confirm it is you', theme: props.theme, body, home: props.homeUrl })
}

function hidden(props: ConfirmPageProps): SafeHtml {
  return html`<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">`
}

function methodForm(props: ConfirmPageProps, method: ConfirmationMethod, autofocus: boolean): SafeHtml {
  const id = `confirm-${method.method}`
  const input =
    method.input === 'password'
      ? html`<input id="${id}" type="password" name="${method.field}" autocomplete="current-password" required${autofocus ? raw(' autofocus') : ''}>`
      : html`<input id="${id}" type="text" name="${method.field}" inputmode="numeric" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="32" required${autofocus ? raw(' autofocus') : ''}>`
  return html`<form method="post" action="${props.action}">
${hidden(props)}
<input type="hidden" name="method" value="${method.method}">
<div><label for="${id}">${method.label}</label>
${input}</div>
<button type="submit">Confirm</button>
</form>`
}

function roundTripForm(props: ConfirmPageProps, trip: ConfirmationRoundTrip): SafeHtml {
  if (!trip.post) return html`<p><a class="button secondary" href="${trip.href}">${trip.label}</a></p>`
  return html`<form method="post" action="${trip.href}">
${hidden(props)}
<button type="submit" class="secondary">${trip.label}</button>
</form>`
}

function mailLinkForm(props: ConfirmPageProps, action: string): SafeHtml {
  return html`<form method="post" action="${action}">
${hidden(props)}
<p>Or get a link by e-mail: it confirms this browser once, within fifteen minutes.</p>
<button type="submit" class="secondary">Send me a link</button>
</form>`
}

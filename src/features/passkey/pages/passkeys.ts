/**
 * The built-in passkeys page (GET `/passkeys`): the signed-in user's passkeys, a button to remove
 * each (a CSRF-checked POST form), and one to add a passkey (driven by the passkey script), with a
 * field for a current code when the user has the second factor on.
 */
import type { Theme } from '../../../types.js'
import type { PasskeyInfo } from '../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout, type PageScript } from '../../../pages/theme.js'

/** What the passkeys page needs. */
export interface PasskeysPageProps {
  passkeys: readonly PasskeyInfo[]
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  /** The passkey provider's id: the add button registers with it. */
  providerId: string
  /** An error code from the query string (`last_sign_in_method`, `WebAuthnVerificationError`, `TwoFactor`). */
  error?: string | undefined
  /** The code of a `WebAuthnVerificationError` or `TwoFactor` error, e.g. `credential_exists`, `invalid_code`. */
  code?: string | undefined
  /**
   * The user has the second factor on: adding a passkey asks for a current code or a recovery code,
   * since a passkey then signs in without one.
   */
  codeRequired?: boolean | undefined
  /** Where "Not now" leads and an added passkey goes on to (the end of a sign-up); absent: stay on the page. */
  next?: string | undefined
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
  script: PageScript
}

// Codes of the query string, mapped to fixed text: a crafted `?error=` cannot put words on the page.
const ERROR_MESSAGES = new Map<string, string>([
  ['last_sign_in_method', 'This passkey is your last way to sign in. Add another passkey or sign-in method before removing it.'],
  ['not_linked', 'That passkey was not found. It may have been removed already.'],
  ['WebAuthnVerificationError', 'The passkey could not be added. Please try again.'],
  ['RateLimited', 'There were too many attempts. Please wait a few minutes before trying again.'],
])

// Codes that say more than their error: a passkey registered already, and the code a user with the
// second factor on gives to add one (`TwoFactorError`).
const CODE_MESSAGES = new Map<string, string>([
  ['credential_exists', 'This passkey is registered already.'],
  ['invalid_code', 'That code is not right, or was used already. Enter the next code your app shows, then add the passkey again.'],
  ['code_required', 'Enter a code from your authenticator app (or a recovery code) to add a passkey.'],
])

/**
 * Renders the passkeys page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderPasskeysPage({ passkeys: [], csrfToken: 'token', basePath: '/api/auth', providerId: 'passkey', theme: {}, script: { src: '/api/auth/webauthn.js', integrity: 'sha256-…' } })
 */
export function renderPasskeysPage(props: PasskeysPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Passkeys page: basePath must be a path or an http(s) URL.')
  const message = props.error === undefined ? undefined : (CODE_MESSAGES.get(props.code ?? '') ?? ERROR_MESSAGES.get(props.error) ?? 'Something went wrong. Please try again.')
  const count = props.passkeys.length
  const next = props.next !== undefined && isSafePageUrl(props.next) ? props.next : undefined
  const body = html`<h1>Your passkeys</h1>
${message !== undefined && html`<div class="alert" role="alert">${message}</div>`}
<p>${count === 0 ? 'You have no passkeys yet. A passkey signs you in with your fingerprint, face or screen lock, without a password.' : `You have ${count} passkey${count === 1 ? '' : 's'}.`}</p>
${count > 0 && html`<ul class="sessions">${props.passkeys.map((passkey) => passkeyRow(passkey, props))}</ul>`}
<form method="post" action="${props.basePath}/callback/${props.providerId}" data-passkey="register" data-passkey-options="${props.basePath}/webauthn-options/${props.providerId}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
${next !== undefined && html`<input type="hidden" name="callbackUrl" value="${next}">`}
${props.codeRequired === true && codeField()}
<button type="submit">Add a passkey</button>
<p class="status" data-passkey-status role="status" aria-live="polite"></p>
</form>
${next !== undefined && html`<p><a href="${next}">Not now</a></p>`}`
  return renderLayout({ title: 'Your passkeys', theme: props.theme, body, home: props.homeUrl, script: props.script })
}

// Required, so the browser asks for it before the passkey script starts the ceremony; the script
// then submits the form with it (src/features/passkey/pages/webauthn-script.ts).
function codeField(): SafeHtml {
  return html`<div><label for="passkey-code">Code from your authenticator app, or a recovery code</label>
<input id="passkey-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="32" required>
<small class="hint">Two-step verification is on: a passkey signs you in without a code, so adding one needs a current code.</small></div>`
}

function passkeyRow(passkey: PasskeyInfo, props: PasskeysPageProps): SafeHtml {
  return html`<li data-passkey-id="${passkey.id}">
<strong>${passkey.deviceType === 'multiDevice' ? 'Synced passkey' : 'Device-bound passkey'}</strong>
<small>${describeTransports(passkey.transports)} · ${passkey.id.slice(0, 12)}…</small>
<form method="post" action="${props.basePath}/passkeys/remove">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="id" value="${passkey.id}">
<button type="submit" class="secondary">Remove</button>
</form>
</li>`
}

const TRANSPORTS = new Map([
  ['internal', 'this device'],
  ['hybrid', 'a phone'],
  ['usb', 'USB'],
  ['nfc', 'NFC'],
  ['ble', 'Bluetooth'],
])

function describeTransports(transports: readonly string[]): string {
  const names = transports.map((transport) => TRANSPORTS.get(transport)).filter((name) => name !== undefined)
  return names.length > 0 ? `Used through ${names.join(', ')}` : 'Passkey'
}

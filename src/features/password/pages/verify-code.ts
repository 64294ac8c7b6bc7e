/**
 * The sign-up's "check your e-mail" page with codes on (GET `/verify-email/code`): the field for the
 * code mailed to the address, a CSRF-checked form posting it, and the way to ask for a new one.
 */
import type { Theme } from '../../../types.js'
import { html } from '../../../pages/html.js'
import { mailedCodeField } from '../../../pages/code-field.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import { CODE_DIGITS } from '../../../mail/code.js'

/** What the code page needs. */
export interface SignUpCodePageProps {
  /** Where the form posts: `/api/auth/verify-email/code`. */
  action: string
  /** Where "send a new code" posts: `/api/auth/verify-email/resend`. */
  resendAction: string
  csrfToken: string
  /** The address the code was mailed to (normalised; shown and posted back). */
  email: string
  callbackUrl: string
  /** Minutes the code works. */
  minutes: number
  /** A message for people (a wrong code, with the tries left). */
  error?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the code page.
 * @throws {TypeError} If an action is not a `/` path or an http(s) URL.
 * @example
 * renderSignUpCodePage({ action: '/api/auth/verify-email/code', resendAction: '/api/auth/verify-email/resend', csrfToken: 'c', email: 'ada@example.com', callbackUrl: '/', minutes: 15, theme: {} })
 */
export function renderSignUpCodePage(props: SignUpCodePageProps): string {
  if (!isSafePageUrl(props.action) || !isSafePageUrl(props.resendAction)) throw new TypeError('Sign-up code page: the form actions must be paths or http(s) URLs.')
  const body = html`<h1>Check your e-mail</h1>
<p>To finish signing up, type the ${CODE_DIGITS}-digit code we sent to <strong>${props.email}</strong>. It works for ${props.minutes} minutes, in this browser.</p>
${props.error !== undefined && html`<div class="alert" role="alert">${props.error}</div>`}
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="email" value="${props.email}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">
${mailedCodeField('sign-up-code', 'Code')}
<button type="submit">Confirm my address</button>
</form>
<form method="post" action="${props.resendAction}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="email" value="${props.email}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">
<button type="submit" class="secondary">Send a new code</button>
</form>`
  return renderLayout({ title: 'Enter your code', theme: props.theme, body, home: props.homeUrl })
}

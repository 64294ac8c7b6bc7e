/**
 * The built-in "enter your code" page: the answer to POST /signin/<id> once the code is mailed, and
 * again after a wrong code. Its form posts the code (CSRF-checked) to /callback/<id>.
 */
import { html } from '../../pages/html.js'
import { mailedCodeField } from '../../pages/code-field.js'
import { isSafePageUrl, renderLayout } from '../../pages/theme.js'
import type { Theme } from '../../types.js'
import { CODE_DIGITS } from '../../mail/code.js'

/** What the code page needs. */
export interface EmailCodePageProps {
  /** The address the code was mailed to, shown and posted back. */
  email: string
  /** Where the form posts, e.g. `/api/auth/callback/email-code`. */
  action: string
  callbackUrl: string
  csrfToken: string
  /** Minutes the code works, for the hint. */
  minutes: number
  /** A message for people (a wrong code). */
  error?: string | undefined
  /** The sign-in page, to ask again. */
  signInUrl: string
  theme: Theme
}

/**
 * Renders the code page.
 * @throws {TypeError} If `action` or `signInUrl` is not an http(s) URL or a `/` path.
 * @example
 * renderEmailCodePage({ email: 'ada@example.com', action: '/api/auth/callback/email-code', callbackUrl: '/', csrfToken: 'c', minutes: 10, signInUrl: '/api/auth/signin', theme: {} })
 */
export function renderEmailCodePage(props: EmailCodePageProps): string {
  if (!isSafePageUrl(props.action) || !isSafePageUrl(props.signInUrl)) throw new TypeError('E-mail code page: the form action and sign-in URL must be paths or http(s) URLs.')
  const body = html`<h1>Check your e-mail</h1>
<p>We sent a ${CODE_DIGITS}-digit code to <strong>${props.email}</strong>. It works for ${props.minutes} minutes, in this browser.</p>
${props.error !== undefined && html`<div class="alert" role="alert">${props.error}</div>`}
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="email" value="${props.email}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">
${mailedCodeField('email-code', 'Code')}
<button type="submit">Sign in</button>
</form>
<p class="links"><a href="${props.signInUrl}">Ask for a new code</a></p>`
  return renderLayout({ title: 'Enter your code', theme: props.theme, body })
}

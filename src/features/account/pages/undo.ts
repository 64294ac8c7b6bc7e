/**
 * The old address's undo page (GET `/account/email/undo`): one button, a CSRF-checked POST, so that
 * a mail scanner that opens the link undoes nothing.
 */
import type { Theme } from '../../../types.js'
import { html } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** What the undo page needs. */
export interface UndoPageProps {
  action: string
  csrfToken: string
  token: string
  email: string
  user: string
  /** The outcome, once posted (then no button). */
  done?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the undo page.
 * @throws {TypeError} If `action` is not a `/` path or an http(s) URL.
 * @example
 * renderUndoPage({ action: '/api/auth/account/email/undo', csrfToken: 'c', token: 't', email: 'ada@example.com', user: 'u', theme: {} })
 */
export function renderUndoPage(props: UndoPageProps): string {
  if (!isSafePageUrl(props.action)) throw new TypeError('Undo page: the form action must be a path or an http(s) URL.')
  const body = props.done
    ? html`<h1>Your address</h1>
<div class="alert" role="status">${props.done}</div>`
    : html`<h1>Undo the change of address</h1>
<p>This puts ${props.email} back as your account's address and signs out every device.</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="token" value="${props.token}">
<input type="hidden" name="email" value="${props.email}">
<input type="hidden" name="user" value="${props.user}">
<button type="submit">Undo the change</button>
</form>`
  return renderLayout({ title: 'Undo the change of address', theme: props.theme, body, home: props.homeUrl })
}

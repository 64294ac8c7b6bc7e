/**
 * The built-in sign-out confirmation page (GET `/signout`). Signing out is a CSRF-checked POST, so
 * a link or an image tag on another site cannot sign anyone out.
 */
import type { Theme } from '../types.js'
import { html } from './html.js'
import { isSafePageUrl, renderLayout } from './theme.js'

/** What the sign-out page needs. */
export interface SignOutPageProps {
  csrfToken: string
  /** Where to go after signing out; posted back in a hidden input. */
  callbackUrl: string
  /** Where the form posts, e.g. `/api/auth/signout`. */
  action: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

/**
 * Renders the sign-out confirmation page.
 *
 * @param props CSRF token, callback URL, form action and theme.
 * @returns The complete HTML document.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderSignOutPage({ csrfToken: 'token', callbackUrl: '/', action: '/api/auth/signout', theme: {} })
 */
export function renderSignOutPage(props: SignOutPageProps): string {
  if (!isSafePageUrl(props.action)) {
    throw new TypeError('Sign-out page: the form action must be a path or an http(s) URL.')
  }
  const body = html`<h1>Sign out</h1>
<p>Are you sure you want to sign out?</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">
<button type="submit">Sign out</button>
</form>`
  return renderLayout({ title: 'Sign out', theme: props.theme, body, home: props.homeUrl })
}

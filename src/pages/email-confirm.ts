/**
 * The built-in "Sign in as …?" page, shown when an e-mail sign-in link is opened in a browser other
 * than the one that asked for it. Only its button, a CSRF-checked POST, uses the link's token.
 */
import type { Theme } from '../types.js'
import { html } from './html.js'
import { isSafePageUrl, renderLayout } from './theme.js'

/** What the confirmation page needs. */
export interface EmailConfirmPageProps {
  /** The address the link signs in as, shown to the user. */
  email: string
  /** Where the form posts, e.g. `/api/auth/callback/nodemailer`. */
  action: string
  /** The link's parameters, posted back in hidden inputs. */
  fields: Readonly<Record<string, string>>
  csrfToken: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

/**
 * Renders the confirmation page of an e-mail sign-in link.
 *
 * @param props The address, form action, the link's fields, CSRF token and theme.
 * @returns The complete HTML document.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderEmailConfirmPage({ email: 'ada@example.com', action: '/api/auth/callback/nodemailer', fields: { token: 't', email: 'ada@example.com' }, csrfToken: 'c', theme: {} })
 */
export function renderEmailConfirmPage(props: EmailConfirmPageProps): string {
  if (!isSafePageUrl(props.action)) throw new TypeError('E-mail confirmation page: the form action must be a path or an http(s) URL.')
  const hidden = Object.entries(props.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)
  const body = html`<h1>Sign in</h1>
<p>Sign in as <strong>${props.email}</strong>?</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
${hidden}<button type="submit">Sign in</button>
</form>
<p>If you did not ask to sign in, close this page.</p>`
  return renderLayout({ title: 'Sign in', theme: props.theme, body, home: props.homeUrl })
}

/**
 * The account page (GET `/account`): the signed-in user's profile and address, and a section for
 * each thing they manage alone, linking the pages of the features that are on (password, passkeys,
 * the second factor, sessions), their linked accounts with "connect" and "disconnect", and deleting
 * the account. Every button is a CSRF-checked POST form.
 */
import type { Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { mailedCodeField } from '../../../pages/code-field.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** One provider account of the user, or one they could connect. */
export interface LinkedProvider {
  readonly id: string
  readonly name: string
  /** The account's id at the provider, for disconnecting one of several. */
  readonly providerAccountId?: string | undefined
}

/** A link to another feature's page. */
export interface AccountLink {
  /** The section's heading. */
  readonly label: string
  /** The link's text. */
  readonly action: string
  readonly href: string
  /** What the section says before the link. */
  readonly text: string
}

/** What the account page needs. */
export interface AccountPageProps {
  /** The routes' base, e.g. `/api/auth`: the forms post to `<basePath>/account/…` and `<basePath>/signin/:id`. */
  basePath: string
  csrfToken: string
  /** The user's name and address, as the user row has them. */
  name: string | null
  email: string | null
  emailVerified: boolean
  /** What a change of address mails (`account.emailChangeBy`): the button says it. Default `'link'`. */
  emailChangeBy?: 'link' | 'code' | 'both' | undefined
  /** Sections linking other features' pages (password, passkeys, second factor, sessions), in order. */
  links: readonly AccountLink[]
  linked: readonly LinkedProvider[]
  /** OAuth providers configured that the user has no account at. */
  connectable: readonly LinkedProvider[]
  /** A message for people (a refused disconnect, the delete box not ticked). */
  error?: string | undefined
  /** A message of success (an account connected or disconnected). */
  notice?: string | undefined
  /** The new address a change's code was mailed to: the page shows the field to type it. */
  codeFor?: string | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the account page.
 * @throws {TypeError} If `basePath` or a link is not a `/` path or an http(s) URL.
 * @example
 * renderAccountPage({ basePath: '/api/auth', csrfToken: 'c', name: 'Ada', email: 'ada@example.com', emailVerified: true, links: [], linked: [], connectable: [], theme: {} })
 */
export function renderAccountPage(props: AccountPageProps): string {
  if (!isSafePageUrl(props.basePath) || props.links.some((link) => !isSafePageUrl(link.href))) throw new TypeError('Account page: basePath and links must be paths or http(s) URLs.')
  const body = html`<h1>Your account</h1>
${props.error ? html`<div class="alert" role="alert">${props.error}</div>` : ''}
${props.notice ? html`<div class="alert" role="status">${props.notice}</div>` : ''}
<section aria-labelledby="account-profile"><h2 id="account-profile">Profile</h2>
<p>${props.name ?? 'No name given'}</p>
<p>${props.email ?? 'No e-mail address'}${props.email ? (props.emailVerified ? ' (confirmed)' : ' (not confirmed)') : ''}</p></section>
<section aria-labelledby="account-email"><h2 id="account-email">Change your e-mail address</h2>
<form method="post" action="${props.basePath}/account/email">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="account-new-email">New e-mail address</label>
<input id="account-new-email" type="email" name="email" autocomplete="email" required></div>
<button type="submit" class="secondary">${props.emailChangeBy === 'code' ? 'Send a code to the new address' : props.emailChangeBy === 'both' ? 'Send a code and a link to the new address' : 'Send a link to the new address'}</button>
</form>
${props.codeFor === undefined ? '' : html`<form method="post" action="${props.basePath}/account/email/code">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="email" value="${props.codeFor}">
${mailedCodeField('account-email-code', `Code sent to ${props.codeFor}`)}
<button type="submit">Change the address</button>
</form>`}</section>
${props.links.map((link) => html`<section><h2>${link.label}</h2><p>${link.text} <a href="${link.href}">${link.action}</a></p></section>`)}
${linkedSection(props)}
<section aria-labelledby="account-delete"><h2 id="account-delete">Delete your account</h2>
<p>This deletes your account and everything that signs you in to it, and signs you out everywhere. It cannot be undone.</p>
<form method="post" action="${props.basePath}/account/delete">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label><input type="checkbox" name="confirm" value="yes" required> I want to delete my account</label></div>
<button type="submit" class="secondary">Delete my account</button>
</form></section>`
  return renderLayout({ title: 'Your account', theme: props.theme, body, home: props.homeUrl })
}

function linkedSection(props: AccountPageProps): SafeHtml | '' {
  if (props.linked.length === 0 && props.connectable.length === 0) return ''
  return html`<section aria-labelledby="account-linked"><h2 id="account-linked">Linked accounts</h2>
<ul class="sessions">${props.linked.map(
    (provider) => html`<li data-provider="${provider.id}"><strong>${provider.name}</strong>
<form method="post" action="${props.basePath}/account/disconnect">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="provider" value="${provider.id}">
${provider.providerAccountId === undefined ? '' : html`<input type="hidden" name="providerAccountId" value="${provider.providerAccountId}">`}
<button type="submit" class="secondary">Disconnect ${provider.name}</button>
</form></li>`,
  )}</ul>
${props.connectable.map(
  (provider) => html`<form method="post" action="${props.basePath}/signin/${provider.id}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="callbackUrl" value="${props.basePath}/account">
<button type="submit" class="secondary">Connect ${provider.name}</button>
</form>`,
)}</section>`
}

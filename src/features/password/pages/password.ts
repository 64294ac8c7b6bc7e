/**
 * The password provider's built-in pages: sign up (GET `/signup`), forgotten password (GET
 * `/forgot-password`), new password from a reset link (GET `/reset-password`), the username
 * (GET `/username`, with `usernames` on), the change of password of a signed-in user (GET
 * `/change-password`). Each is one
 * CSRF-protected form; a refused input comes back on the same page with what was wrong, never with
 * the password typed. Every value is escaped.
 */
import type { Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** What every password page shows. */
interface PasswordPageBase {
  /** Where the form posts, e.g. `/api/auth/signup`. */
  action: string
  csrfToken: string
  /** A message for people, shown above the form (the policy's, or "enter a valid address"). */
  error?: string | undefined
  /** The built-in sign-in page, linked under the form. */
  signInUrl: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

/** What the sign-up page needs. */
export interface SignUpPageProps extends PasswordPageBase {
  callbackUrl: string
  /** Filled in again after a refused attempt. */
  email?: string | undefined
  name?: string | undefined
  /** The username field, when the provider has usernames: what was typed, and whether it must be. */
  username?: { value?: string | undefined; required: boolean; maxLength: number; hint?: string | undefined } | undefined
  minLength: number
  maxLength: number
}

/** What the username page needs: the user's username now (null: none yet). */
export interface UsernamePageProps extends Omit<PasswordPageBase, 'signInUrl'> {
  current: string | null
  /** The value typed, after a refusal. */
  value?: string | undefined
  minLength: number
  maxLength: number
  /** Which characters are allowed, said under the field (the default rules'; none for an app's own pattern). */
  hint?: string | undefined
  /** The account page, linked under the form, when it is on. */
  accountUrl?: string | undefined
}

/** What the forgotten-password page needs. */
export interface ForgotPasswordPageProps extends PasswordPageBase {
  email?: string | undefined
}

/** What the reset page needs: the link's token and address, posted back with the new password. */
export interface ResetPasswordPageProps extends PasswordPageBase {
  token: string
  email: string
  minLength: number
  maxLength: number
}

/** What the change-password page needs: whether the user has a password yet, and a notice after a change. */
export interface ChangePasswordPageProps extends Omit<PasswordPageBase, 'signInUrl'> {
  /** False for a user who signs in another way: the page offers a mailed link to set one instead. */
  hasPassword: boolean
  /** "Forgot your password?": the page that mails a link setting a new one. */
  forgotUrl: string
  /** Shown after a change went through. */
  notice?: string | undefined
  minLength: number
  maxLength: number
  /** The account page, linked under the form, when it is on. */
  accountUrl?: string | undefined
}

function assertAction(action: string, page: string): void {
  if (!isSafePageUrl(action)) throw new TypeError(`${page} page: the form action must be a path or an http(s) URL.`)
}

function alert(error: string | undefined): SafeHtml | null {
  return error ? html`<div class="alert" role="alert">${error}</div>` : null
}

function newPasswordField(id: string, minLength: number, maxLength: number, label = 'Password'): SafeHtml {
  // maxlength counts UTF-16 units, the policy code points after NFKC: the browser's limit is the looser.
  return html`<div><label for="${id}">${label}</label>
<input id="${id}" type="password" name="password" autocomplete="new-password" minlength="${String(minLength)}" maxlength="${String(maxLength * 2)}" required>
<small class="hint">At least ${String(minLength)} characters. A few unrelated words make a strong one.</small></div>`
}

function usernameField(id: string, { value, required, maxLength, hint }: NonNullable<SignUpPageProps['username']>): SafeHtml {
  // maxlength counts UTF-16 units, the rule code points after NFKC: the browser's limit is the looser.
  return html`<div><label for="${id}">Username${required ? '' : ' (optional)'}</label>
<input id="${id}" type="text" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="${String(maxLength * 2)}" value="${value ?? ''}"${required ? html` required` : null}>
<small class="hint">${hint === undefined ? '' : `${hint} `}You can sign in with it or with your address.</small></div>`
}

/** What the pages say of the default pattern's characters. */
export const DEFAULT_USERNAME_HINT = 'Letters, digits, ".", "_" and "-", starting with a letter or a digit.'

/**
 * Renders the page where a signed-in user chooses their username (GET `/username`).
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderUsernamePage({ action: '/api/auth/username', csrfToken: 'c', current: 'ada', minLength: 3, maxLength: 30, theme: {} })
 */
export function renderUsernamePage(props: UsernamePageProps): string {
  assertAction(props.action, 'Username')
  const body = html`<h1>Your username</h1>
${alert(props.error)}
<p>${props.current === null ? 'You have no username yet: you sign in with your e-mail address.' : html`Your username is <strong>${props.current}</strong>. You can sign in with it or with your address.`}</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="username-new">New username</label>
<input id="username-new" type="text" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" minlength="${String(props.minLength)}" maxlength="${String(props.maxLength * 2)}" value="${props.value ?? ''}" required>
<small class="hint">${String(props.minLength)} to ${String(props.maxLength)} characters.${props.hint === undefined ? '' : ` ${props.hint}`}</small></div>
<button type="submit">Save the username</button>
</form>
${props.accountUrl ? html`<p><a href="${props.accountUrl}">Back to your account</a></p>` : null}`
  return renderLayout({ title: 'Your username', theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the change-password page: the current password and the new one, or for a user without a
 * password, the way to set one by mail.
 * @throws {TypeError} If `action` or `forgotUrl` is not an http(s) URL or a `/` path.
 * @example
 * renderChangePasswordPage({ action: '/api/auth/change-password', csrfToken: 'c', hasPassword: true, forgotUrl: '/api/auth/forgot-password', minLength: 8, maxLength: 256, theme: {} })
 */
export function renderChangePasswordPage(props: ChangePasswordPageProps): string {
  assertAction(props.action, 'Change password')
  assertAction(props.forgotUrl, 'Change password')
  const form = html`<p>Changing it signs you out on every other device.</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="change-current">Current password</label>
<input id="change-current" type="password" name="currentPassword" autocomplete="current-password" required></div>
${newPasswordField('change-password', props.minLength, props.maxLength, 'New password')}
<button type="submit">Change the password</button>
</form>
<p><a href="${props.forgotUrl}">Forgot your password?</a></p>`
  const none = html`<p>You have no password yet: you sign in another way. A link mailed to your address sets one.</p>
<p><a href="${props.forgotUrl}">Set a password</a></p>`
  const body = html`<h1>Change your password</h1>
${alert(props.error)}
${props.notice ? html`<div class="alert" role="status">${props.notice}</div>` : null}
${props.hasPassword ? form : none}
${props.accountUrl ? html`<p><a href="${props.accountUrl}">Back to your account</a></p>` : null}`
  return renderLayout({ title: 'Change your password', theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the sign-up page.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderSignUpPage({ action: '/api/auth/signup', csrfToken: 'c', callbackUrl: '/', signInUrl: '/api/auth/signin', minLength: 8, maxLength: 256, theme: {} })
 */
export function renderSignUpPage(props: SignUpPageProps): string {
  assertAction(props.action, 'Sign-up')
  const body = html`<h1>Create an account</h1>
${alert(props.error)}
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">
<div><label for="signup-name">Name (optional)</label>
<input id="signup-name" type="text" name="name" autocomplete="name" maxlength="255" value="${props.name ?? ''}"></div>
<div><label for="signup-email">E-mail</label>
<input id="signup-email" type="email" name="email" autocomplete="email" placeholder="email@example.com" value="${props.email ?? ''}" required></div>
${props.username ? usernameField('signup-username', props.username) : null}
${newPasswordField('signup-password', props.minLength, props.maxLength)}
<button type="submit">Create account</button>
</form>
<p>We will send you a link to confirm your address.</p>
<p><a href="${props.signInUrl}">Already have an account? Sign in</a></p>`
  return renderLayout({ title: 'Create an account', theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the forgotten-password page.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderForgotPasswordPage({ action: '/api/auth/forgot-password', csrfToken: 'c', signInUrl: '/api/auth/signin', theme: {} })
 */
export function renderForgotPasswordPage(props: ForgotPasswordPageProps): string {
  assertAction(props.action, 'Forgotten password')
  const body = html`<h1>Forgot your password?</h1>
${alert(props.error)}
<p>Enter your e-mail address: if it has an account, we will send it a link to choose a new password.</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="forgot-email">E-mail</label>
<input id="forgot-email" type="email" name="email" autocomplete="email" placeholder="email@example.com" value="${props.email ?? ''}" required></div>
<button type="submit">Send the link</button>
</form>
<p><a href="${props.signInUrl}">Back to sign in</a></p>`
  return renderLayout({ title: 'Forgot your password?', theme: props.theme, body, home: props.homeUrl })
}

/**
 * Renders the page of a reset link: the new password for the link's address. The token is not
 * used (nor looked up) until the form is posted, so a mail scanner's GET burns nothing.
 * @throws {TypeError} If `action` is not an http(s) URL or a `/` path.
 * @example
 * renderResetPasswordPage({ action: '/api/auth/reset-password', csrfToken: 'c', token: 't', email: 'ada@example.com', signInUrl: '/api/auth/signin', minLength: 8, maxLength: 256, theme: {} })
 */
export function renderResetPasswordPage(props: ResetPasswordPageProps): string {
  assertAction(props.action, 'Reset password')
  const body = html`<h1>Choose a new password</h1>
${alert(props.error)}
<p>For <strong>${props.email}</strong>. Setting it signs you out on every other device.</p>
<form method="post" action="${props.action}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="token" value="${props.token}">
<input type="hidden" name="email" value="${props.email}">
<input type="text" name="username" value="${props.email}" autocomplete="username" hidden>
${newPasswordField('reset-password', props.minLength, props.maxLength)}
<button type="submit">Set the new password</button>
</form>
<p><a href="${props.signInUrl}">Back to sign in</a></p>`
  return renderLayout({ title: 'Choose a new password', theme: props.theme, body, home: props.homeUrl })
}

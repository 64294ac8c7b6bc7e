/**
 * The built-in sign-in page (GET `/signin`): one POST form per provider, grouped, with an error
 * message box when the query string carries an error code. A passkey provider adds a button that the
 * passkey script drives, and, with conditional UI, marks the e-mail or username field
 * `autocomplete="username webauthn"` so that the browser offers passkeys in its autofill.
 */
import type { Theme } from '../types.js'
import { html, type SafeHtml } from './html.js'
import { isSafePageUrl, renderLayout, type PageScript } from './theme.js'

/** One provider as the sign-in page shows it. */
export interface SignInPageProvider {
  id: string
  name: string
  type: 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn' | 'sso'
  /** Where this provider's form posts: e.g. `/api/auth/signin/github`, or `/api/auth/callback/credentials` for credentials. */
  action: string
  /** Links under the provider's form, e.g. the password provider's "Forgot your password?" and "Create an account". */
  links?: readonly { href: string; label: string }[] | undefined
  /** Passkeys: where the script fetches the options, e.g. `/api/auth/webauthn-options/passkey`. */
  optionsUrl?: string | undefined
  /** Passkeys: offer them in the autofill of the e-mail or username field too (conditional UI). */
  conditional?: boolean | undefined
  /** Credentials providers: the field definitions, e.g. { username: { label: 'Username', type: 'text', placeholder: 'jsmith' }, password: { label: 'Password', type: 'password' } } */
  credentials?: Record<
    string,
    { label?: string; type?: string; placeholder?: string; required?: boolean; [k: string]: unknown }
  >
}

/** What the sign-in page needs. */
export interface SignInPageProps {
  providers: SignInPageProvider[]
  csrfToken: string
  /** Goes in a hidden input in every form. */
  callbackUrl: string
  /** An error code from the query string, e.g. `CredentialsSignin`. */
  error?: string
  /** The credentials `code` from the query string, e.g. `email_not_verified`. */
  code?: string | undefined
  /** The password provider's "send the link again" form action, shown with `code=email_not_verified`. */
  resendAction?: string | undefined
  theme: Theme
  /** The passkey script, when a passkey provider is configured. */
  script?: PageScript | undefined
  /**
   * The form whose sign-in was just refused (with `error`): its message is shown at that form, and
   * the fields typed (never a password) are filled in again.
   */
  refused?: { providerId: string; fields: Readonly<Record<string, string>> } | undefined
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

const TRY_ANOTHER = 'Try signing in with a different account.'

// A Map, not an object literal: a code such as `constructor` or `__proto__` must not find an entry.
const ERROR_MESSAGES = new Map<string, string>([
  ['CredentialsSignin', 'Sign in failed. Check the details you provided are correct.'],
  ['MissingCSRF', 'The sign-in form expired. Please try again.'],
  ['SessionRequired', 'Please sign in to access this page.'],
  ['AccessDenied', 'You do not have permission to sign in.'],
  ['OAuthSignin', TRY_ANOTHER],
  ['OAuthSignInError', TRY_ANOTHER],
  ['InvalidCheck', 'The sign-in expired or was started in another tab. Please try again.'],
  ['OAuthCallbackError', TRY_ANOTHER],
  ['OAuthCreateAccount', TRY_ANOTHER],
  ['EmailCreateAccount', TRY_ANOTHER],
  ['Callback', TRY_ANOTHER],
  ['Signin', TRY_ANOTHER],
  ['OAuthAccountNotLinked', 'To confirm your identity, sign in with the same account you used originally.'],
  ['EmailSignin', 'The e-mail could not be sent.'],
  ['EmailSignInError', 'The sign-in e-mail could not be sent. Check the address and try again.'],
  ['Verification', 'The sign-in link is no longer valid.'],
  ['RateLimited', 'There were too many sign-in attempts. Please wait a few minutes before trying again.'],
  ['WebAuthnVerificationError', 'The passkey could not be used. Please try again, or sign in another way.'],
  ['TwoFactor', 'The second step of the sign-in was not completed in time. Please sign in again.'],
  ['UserBanned', 'This account cannot sign in. Contact the site if you think this is a mistake.'],
  ['SSO', 'Single sign-on could not sign you in. Please try again, or sign in another way.'],
  ['SSO:no_connection', 'No organization signs in this address with single sign-on. Sign in another way.'],
  ['SSO:sso_required', 'Your organization signs you in through its own identity provider: enter your work address under single sign-on.'],
  ['SSO:address_outside_domains', "Your organization's identity provider answered with an address outside the organization's domains. Ask its administrator."],
  ['SamlResponse', "Your organization's identity provider's answer could not be accepted. Please try again, or ask its administrator."],
])

/**
 * The message the sign-in page shows for an error code. Unknown codes get a generic message and
 * are never echoed, so a crafted `?error=` cannot put text on the page.
 *
 * @param code The `error` query parameter.
 * @param detail The `code` query parameter, for the errors whose message depends on which step refused (`SSO`).
 * @returns A message for people, in plain text.
 * @example
 * signInErrorMessage('CredentialsSignin') // 'Sign in failed. Check the details you provided are correct.'
 * signInErrorMessage('anything else') // 'Unable to sign in.'
 */
export function signInErrorMessage(code: string | undefined, detail?: string): string {
  return (code !== undefined && ((detail !== undefined && ERROR_MESSAGES.get(`${code}:${detail}`)) || ERROR_MESSAGES.get(code))) || 'Unable to sign in.'
}

/**
 * Renders the sign-in page.
 *
 * @param props Providers, CSRF token, callback URL, optional error code and theme.
 * @returns The complete HTML document.
 * @throws {TypeError} If a provider's `action` is not an http(s) URL or a `/` path (a bug in the
 *   caller: a form must never post credentials to a `javascript:` or foreign protocol-relative URL).
 * @example
 * renderSignInPage({
 *   providers: [{ id: 'github', name: 'GitHub', type: 'oauth', action: '/api/auth/signin/github' }],
 *   csrfToken: 'token', callbackUrl: '/', theme: {},
 * })
 */
export function renderSignInPage(props: SignInPageProps): string {
  const hidden = html`<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="callbackUrl" value="${props.callbackUrl}">`
  const autofill = props.script !== undefined && props.providers.some((provider) => provider.type === 'webauthn' && provider.conditional === true)
  // The refused form, when it is one of this page's: its message goes above it, its fields are filled in.
  const refused = props.error !== undefined ? props.providers.find((provider) => provider.id === props.refused?.providerId && provider.type !== 'webauthn') : undefined
  const typed = refused !== undefined ? props.refused!.fields : {}
  // Single sign-on asks for the address first: its form leads, and the other ways follow below it.
  const providers = [...props.providers.filter((provider) => provider.type === 'sso'), ...props.providers.filter((provider) => provider.type !== 'sso')]
  const forms = providers.map((provider, index) => ({
    buttonOnly: provider.type === 'oauth' || provider.type === 'oidc' || provider.type === 'webauthn',
    markup: html`${provider === refused && !unverifiedError(props) && formAlert(provider, props.error!)}${providerForm(provider, index, hidden, autofill, provider === refused ? typed : {})}`,
  }))
  const groups = groupForms(forms).map((group) => html`<div class="group">${group}</div>`)
  const unverified = unverifiedError(props) && props.resendAction !== undefined
  const topAlert = props.error !== undefined && props.error !== '' && refused === undefined && html`<div class="alert" role="alert">${signInErrorMessage(props.error, props.code)}</div>`
  const body = html`<h1>Sign in</h1>
${unverified ? resendForm(props.resendAction!, hidden, typed.email?.includes('@') ? typed.email : undefined) : topAlert}
${groups.length === 0 ? html`<p>No sign-in methods are configured.</p>` : joinWithDivider(groups)}`
  return renderLayout({ title: 'Sign in', theme: props.theme, body, home: props.homeUrl, script: props.providers.some((provider) => provider.type === 'webauthn') ? props.script : undefined })
}

function unverifiedError(props: SignInPageProps): boolean {
  return props.error === 'CredentialsSignin' && props.code === 'email_not_verified'
}

// Said at the form that failed, naming it: a page with several forms asking for an address must not leave the user guessing.
function formAlert(provider: SignInPageProvider, error: string): SafeHtml {
  const message =
    error === 'CredentialsSignin'
      ? `Sign in with ${provider.name} failed. Check the details you entered are correct.`
      : error === 'EmailSignInError'
        ? 'The sign-in link could not be sent. Check the address and try again.'
        : signInErrorMessage(error)
  return html`<div class="alert" role="alert">${message}</div>`
}

// The password was right but the address is not verified yet: say so, and offer the link again
// (filled in with what was typed only when it was an address, not a username).
function resendForm(action: string, hidden: SafeHtml, email: string | undefined): SafeHtml {
  if (!isSafePageUrl(action)) throw new TypeError('Sign-in page: the resend form action must be a path or an http(s) URL.')
  return html`<div class="alert" role="alert">Confirm your e-mail address first: open the link we sent you when you signed up.</div>
<form method="post" action="${action}">
${hidden}
<div><label for="resend-email">E-mail address to confirm</label>
<input id="resend-email" type="email" name="email" autocomplete="email"${email !== undefined && html` value="${email}"`} required></div>
<button type="submit" class="secondary">Send the link again</button>
</form>
<div class="divider">or</div>`
}

// OAuth/OIDC buttons sit together in one group; each e-mail or credentials form is a group of its own,
// so two forms with inputs are never run together without a divider.
function groupForms(forms: { buttonOnly: boolean; markup: SafeHtml }[]): SafeHtml[][] {
  const groups: SafeHtml[][] = []
  let lastWasButton = false
  for (const form of forms) {
    const last = groups.at(-1)
    if (last !== undefined && form.buttonOnly && lastWasButton) last.push(form.markup)
    else groups.push([form.markup])
    lastWasButton = form.buttonOnly
  }
  return groups
}

function joinWithDivider(groups: SafeHtml[]): SafeHtml[] {
  return groups.flatMap((group, index) => (index === 0 ? [group] : [html`<div class="divider">or</div>`, group]))
}

// `index` keeps input ids unique and free of provider-chosen characters.
function providerForm(provider: SignInPageProvider, index: number, hidden: SafeHtml, autofill: boolean, typed: Readonly<Record<string, string>>): SafeHtml {
  if (!isSafePageUrl(provider.action)) {
    throw new TypeError(`Sign-in page: provider "${provider.id}" has an unsafe form action; use a path or an http(s) URL.`)
  }
  if (provider.type === 'webauthn') return passkeyForm(provider, hidden)
  const fields =
    provider.type === 'email'
      ? emailField(index, autofill, typed.email)
      : provider.type === 'sso'
        ? ssoField(index, typed.email)
        : provider.type === 'credentials'
        ? credentialFields(provider, index, autofill, typed)
        : []
  const links = (provider.links ?? []).filter((link) => isSafePageUrl(link.href))
  return html`<form method="post" action="${provider.action}">
${hidden}
${fields}
<button type="submit">${provider.type === 'sso' ? 'Continue with single sign-on' : html`Sign in with ${provider.name}`}</button>
${links.length > 0 && html`<p class="links">${links.map((link) => html`<a href="${link.href}">${link.label}</a>`)}</p>`}
</form>`
}

// Labelled by what it does: beside a password form's own "E-mail", two fields of one name would leave
// the user guessing which one signs in how.
function emailField(index: number, autofill: boolean, value: string | undefined): SafeHtml {
  const id = `input-${index}-email`
  // `username webauthn`: the field names the account (password managers and passkeys file them so),
  // and the browser may offer passkeys in its autofill; `webauthn` must be the last token.
  return html`<div><label for="${id}">E-mail address for a sign-in link</label>
<input id="${id}" type="email" name="email" placeholder="email@example.com" autocomplete="${autofill ? 'username webauthn' : 'email'}"${value !== undefined && html` value="${value}"`} required>
<small class="hint">We e-mail you a link that signs you in, no password needed.</small></div>`
}

// The work address decides the organization whose identity provider signs the user in (home-realm discovery).
function ssoField(index: number, value: string | undefined): SafeHtml {
  const id = `input-${index}-sso`
  return html`<div><label for="${id}">Work e-mail address</label>
<input id="${id}" type="email" name="email" placeholder="you@company.example" autocomplete="email"${value !== undefined && html` value="${value}"`} required>
<small class="hint">If your organization signs you in with its own identity provider, we take you there.</small></div>`
}

// The script (webauthn.js) drives the form: without it, or without WebAuthn, the button says why.
function passkeyForm(provider: SignInPageProvider, hidden: SafeHtml): SafeHtml {
  if (!isSafePageUrl(provider.optionsUrl)) throw new TypeError(`Sign-in page: provider "${provider.id}" needs a safe optionsUrl (a path or an http(s) URL).`)
  const label = provider.name === 'Passkey' ? 'Sign in with a passkey' : `Sign in with ${provider.name}`
  return html`<form method="post" action="${provider.action}" data-passkey="authenticate" data-passkey-options="${provider.optionsUrl}"${provider.conditional === true && html` data-passkey-conditional`}>
${hidden}
<button type="submit">${label}</button>
<p class="status" data-passkey-status role="status" aria-live="polite"></p>
</form>`
}

// Input types a credential field may ask for; anything else (hidden, file, submit, …) becomes text.
const FIELD_TYPES = new Set(['text', 'password', 'email', 'number', 'tel', 'url', 'search', 'date', 'time'])

function credentialFields(provider: SignInPageProvider, index: number, autofill: boolean, typed: Readonly<Record<string, string>>): SafeHtml[] {
  return Object.entries(provider.credentials ?? {}).map(([key, field], fieldIndex) => {
    const id = `input-${index}-${fieldIndex}`
    const type = typeof field.type === 'string' && FIELD_TYPES.has(field.type) ? field.type : 'text'
    const named = autocompleteFor(key, type)
    const autocomplete = autofill && named === 'username' ? 'username webauthn' : named
    // A password is never filled in again, whatever the refused form brought back.
    const value = type !== 'password' && Object.hasOwn(typed, key) ? typed[key] : undefined
    return html`<div><label for="${id}">${field.label ?? key}</label>
<input id="${id}" type="${type}" name="${key}"${field.placeholder !== undefined && html` placeholder="${field.placeholder}"`}${autocomplete !== undefined && html` autocomplete="${autocomplete}"`}${value !== undefined && html` value="${value}"`}${field.required === true && html` required`}></div>`
  })
}

// Password managers fill the right fields only when told which is the login name and which the password.
function autocompleteFor(key: string, type: string): string | undefined {
  if (type === 'password' || /password/i.test(key)) return 'current-password'
  if (type === 'email' || /user|login|e-?mail/i.test(key)) return 'username'
  return undefined
}

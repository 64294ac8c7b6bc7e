import { describe, it, expect } from '@jest/globals'
import { renderPasskeysPage } from '../../src/features/passkey/pages/passkeys.js'
import { renderForgotPasswordPage, renderResetPasswordPage, renderSignUpPage } from '../../src/features/password/pages/password.js'
import { renderSessionsPage } from '../../src/features/sessions/pages/sessions.js'
import { renderTwoFactorPage, renderTwoFactorSetupPage } from '../../src/features/two-factor/pages/two-factor.js'
import {
  renderEmailConfirmPage,
  renderErrorPage,
  renderSignInPage,
  renderSignOutPage,
  renderVerifyRequestPage,
  signInErrorMessage,
  type SignInPageProps,
  type SignInPageProvider,
} from '../../src/pages/index.js'
import { escapeHtml, html, raw, SafeHtml } from '../../src/pages/html.js'
import { isSafeCssColor, isSafePageUrl, renderLayout, resolveTheme } from '../../src/pages/theme.js'

const SCRIPT = '"><script>alert(1)</script>'
const SCRIPT_ESCAPED = '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
const ATTR = "' onmouseover='x"
const ATTR_ESCAPED = '&#39; onmouseover=&#39;x'
const STYLE = '</style><script>'
const BAD_COLOR = 'red;}</style><script>alert(1)</script>'

const github: SignInPageProvider = { id: 'github', name: 'GitHub', type: 'oauth', action: '/api/auth/signin/github' }
const google: SignInPageProvider = { id: 'google', name: 'Google', type: 'oidc', action: '/api/auth/signin/google' }
const email: SignInPageProvider = { id: 'email', name: 'Email', type: 'email', action: '/api/auth/signin/email' }
const credentials: SignInPageProvider = {
  id: 'credentials',
  name: 'Credentials',
  type: 'credentials',
  action: '/api/auth/callback/credentials',
  credentials: {
    username: { label: 'Username', type: 'text', placeholder: 'jsmith', required: true },
    password: { label: 'Password', type: 'password' },
  },
}

function signIn(overrides: Partial<SignInPageProps> = {}): string {
  return renderSignInPage({
    providers: [github, credentials],
    csrfToken: 'csrf-123',
    callbackUrl: 'https://app.example/dashboard',
    theme: {},
    ...overrides,
  })
}

/** The `<form …>…</form>` elements of a page, in order. */
function forms(page: string): string[] {
  return page.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? []
}

/** The `<input …>` tags of a fragment. */
function inputs(fragment: string): string[] {
  return fragment.match(/<input\b[^>]*>/g) ?? []
}

/** The value of attribute `name` in a single tag, as written (still escaped). */
function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1]
}

/** The <style> element's content. */
function css(page: string): string {
  return /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? ''
}

/** The <input> with the given name in a fragment. */
function inputNamed(fragment: string, name: string): string | undefined {
  return inputs(fragment).find((tag) => attr(tag, 'name') === name)
}

function expectNoScript(page: string): void {
  expect(page).not.toMatch(/<script/i)
  expect(page).not.toMatch(/\son\w+='/i)
}

describe('html helper', () => {
  it('escapes & < > " \' and `', () => {
    expect(escapeHtml(`&<>"'\``)).toBe('&amp;&lt;&gt;&quot;&#39;&#96;')
  })

  it('renders null and undefined as empty and other values through String()', () => {
    expect(escapeHtml(null)).toBe('')
    expect(escapeHtml(undefined)).toBe('')
    expect(escapeHtml(42)).toBe('42')
  })

  it('escapes interpolated values and inserts SafeHtml and raw() as they are', () => {
    const out = html`<p title="${'"x"'}">${'<b>'}${html`<i>ok</i>`}${raw('<br>')}</p>`
    expect(out).toBeInstanceOf(SafeHtml)
    expect(out.__html).toBe('<p title="&quot;x&quot;">&lt;b&gt;<i>ok</i><br></p>')
  })

  it('joins arrays, escaping plain items, and renders false/null/undefined as nothing', () => {
    expect(html`${['<a>', html`<hr>`, null, undefined, false]}`.__html).toBe('&lt;a&gt;<hr>')
  })

  it('does not trust a look-alike { __html } object from data', () => {
    const forged = { __html: '<script>alert(1)</script>' }
    expect(html`${forged}`.__html).not.toContain('<script')
  })
})

describe('theme validation', () => {
  it.each(['#fff', '#ffff', '#2563eb', '#2563eb80', 'rgb(1, 2, 3)', 'rgba(1,2,3,.5)', 'hsl(210, 50%, 40%)', 'hsla(1,2%,3%,0.4)', 'rebeccapurple'])(
    'accepts the colour %s',
    (colour) => expect(isSafeCssColor(colour)).toBe(true),
  )

  it.each([BAD_COLOR, 'red;', '#12345', '#ggg', 'rgb(1,2,3);x:y', 'url(x)', 'var(--x)', 'expression(alert(1))', 'red }', '', 'rgb(1 2 3 / 50%)'])(
    'rejects the colour %j',
    (colour) => expect(isSafeCssColor(colour)).toBe(false),
  )

  it.each(['https://cdn.example/logo.png', 'http://example.com/x.svg', '/logo.png'])('accepts the URL %s', (url) =>
    expect(isSafePageUrl(url)).toBe(true),
  )

  it.each(['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:image/png;base64,AA', '//evil.example/x.png', '/\\evil.example', '/\t/evil.example', 'logo.png', 'https://', ''])(
    'rejects the URL %j',
    (url) => expect(isSafePageUrl(url)).toBe(false),
  )

  it('falls back to the defaults for invalid values', () => {
    expect(resolveTheme({ brandColor: BAD_COLOR, buttonText: STYLE, logo: 'javascript:alert(1)' })).toEqual({
      colorScheme: 'auto',
      brandColor: '#346df1',
      buttonText: '#fff',
      logo: undefined,
    })
  })
})

describe('layout', () => {
  const page = renderLayout({ title: 'T <1>', theme: {}, body: html`<p>body</p>` })

  it('is a complete, accessible HTML5 document', () => {
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect(page).toContain('<html lang="en">')
    expect(page).toContain('<meta charset="utf-8">')
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(page).toContain('<title>T &lt;1&gt;</title>')
    expect(page).toContain('<p>body</p>')
  })

  it('produces different CSS for light, dark and auto colour schemes', () => {
    const light = css(renderLayout({ title: 't', theme: { colorScheme: 'light' }, body: html`` }))
    const dark = css(renderLayout({ title: 't', theme: { colorScheme: 'dark' }, body: html`` }))
    const auto = css(renderLayout({ title: 't', theme: {}, body: html`` }))
    expect(new Set([light, dark, auto]).size).toBe(3)
    expect(auto).toContain('prefers-color-scheme: dark')
    expect(light).not.toContain('prefers-color-scheme')
    expect(dark).not.toContain('prefers-color-scheme')
    expect(light).toContain('color-scheme:light')
    expect(dark).toContain('color-scheme:dark')
    expect(css(renderLayout({ title: 't', theme: { colorScheme: 'auto' }, body: html`` }))).toBe(auto)
  })

  it('uses valid brand and button colours', () => {
    const style = css(renderLayout({ title: 't', theme: { brandColor: '#2563eb', buttonText: 'black' }, body: html`` }))
    expect(style).toContain('--brand:#2563eb')
    expect(style).toContain('--button-text:black')
  })

  it('ignores brand and button colours that would break out of the style element', () => {
    const out = renderLayout({ title: 't', theme: { brandColor: BAD_COLOR, buttonText: STYLE }, body: html`` })
    expectNoScript(out)
    expect(out).not.toContain('alert(1)')
    expect(out.match(/<\/style>/g)).toHaveLength(1)
    expect(css(out)).toContain('--brand:#346df1')
    expect(css(out)).toContain('--button-text:#fff')
  })

  it('shows a logo with an http(s) URL or a root path, escaped in the attribute', () => {
    const out = renderLayout({ title: 't', theme: { logo: 'https://cdn.example/logo.png?a=1&b="2"' }, body: html`` })
    expect(out).toContain('<img class="logo" src="https://cdn.example/logo.png?a=1&amp;b=&quot;2&quot;" alt="">')
    expect(renderLayout({ title: 't', theme: { logo: '/logo.png' }, body: html`` })).toContain('src="/logo.png"')
  })

  it('drops a javascript:, data: or protocol-relative logo', () => {
    for (const logo of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', '//evil.example/x.png']) {
      const out = renderLayout({ title: 't', theme: { logo }, body: html`` })
      expect(out).not.toContain('<img')
      expect(out).not.toContain('alert(1)')
      expect(out).not.toContain('evil.example')
    }
  })
})

describe('sign-in page', () => {
  it('renders one POST form per provider with its action and the hidden csrfToken and callbackUrl', () => {
    const page = signIn({ providers: [github, google, email, credentials] })
    const all = forms(page)
    expect(all).toHaveLength(4)
    expect(all.map((form) => attr(form.slice(0, form.indexOf('>') + 1), 'action'))).toEqual([
      '/api/auth/signin/github',
      '/api/auth/signin/google',
      '/api/auth/signin/email',
      '/api/auth/callback/credentials',
    ])
    for (const form of all) {
      expect(form).toMatch(/^<form method="post"/)
      expect(attr(inputNamed(form, 'csrfToken') ?? '', 'value')).toBe('csrf-123')
      expect(attr(inputNamed(form, 'csrfToken') ?? '', 'type')).toBe('hidden')
      expect(attr(inputNamed(form, 'callbackUrl') ?? '', 'value')).toBe('https://app.example/dashboard')
      expect(attr(inputNamed(form, 'callbackUrl') ?? '', 'type')).toBe('hidden')
    }
  })

  it('gives OAuth and OIDC providers a "Sign in with {name}" button and no other inputs', () => {
    const [gh, gg] = forms(signIn({ providers: [github, google] }))
    expect(gh).toContain('<button type="submit">Sign in with GitHub</button>')
    expect(gg).toContain('<button type="submit">Sign in with Google</button>')
    expect(inputs(gh ?? '').map((tag) => attr(tag, 'type'))).toEqual(['hidden', 'hidden'])
  })

  it('gives the e-mail provider a required, labelled email input', () => {
    const [form] = forms(signIn({ providers: [email] }))
    const input = inputNamed(form ?? '', 'email') ?? ''
    expect(attr(input, 'type')).toBe('email')
    expect(attr(input, 'autocomplete')).toBe('email')
    expect(input).toMatch(/\srequired[\s>]/)
    expect(form).toContain(`<label for="${attr(input, 'id')}">`)
    expect(form).toContain('Sign in with Email</button>')
  })

  it('gives credentials one labelled input per field, with type, placeholder, autocomplete and required', () => {
    const [form = ''] = forms(signIn({ providers: [credentials] }))
    const username = inputNamed(form, 'username') ?? ''
    const password = inputNamed(form, 'password') ?? ''
    expect(attr(username, 'type')).toBe('text')
    expect(attr(username, 'placeholder')).toBe('jsmith')
    expect(attr(username, 'autocomplete')).toBe('username')
    expect(username).toMatch(/\srequired[\s>]/)
    expect(attr(password, 'type')).toBe('password')
    expect(attr(password, 'autocomplete')).toBe('current-password')
    expect(password).not.toMatch(/\srequired[\s>]/)
    expect(password).not.toContain('placeholder=')
    expect(form).toContain(`<label for="${attr(username, 'id')}">Username</label>`)
    expect(form).toContain(`<label for="${attr(password, 'id')}">Password</label>`)
    expect(form).toContain('Sign in with Credentials</button>')
  })

  it('defaults a credential field to type text, labelled by its key, and refuses odd types', () => {
    const provider: SignInPageProvider = {
      ...credentials,
      credentials: { otp: {}, secret: { type: 'hidden' } },
    }
    const [form = ''] = forms(signIn({ providers: [provider] }))
    const otp = inputNamed(form, 'otp') ?? ''
    expect(attr(otp, 'type')).toBe('text')
    expect(otp).not.toContain('autocomplete=')
    expect(form).toContain(`<label for="${attr(otp, 'id')}">otp</label>`)
    expect(attr(inputNamed(form, 'secret') ?? '', 'type')).toBe('text')
  })

  it('gives every input a unique id, even for two e-mail providers', () => {
    const page = signIn({ providers: [email, { ...email, id: 'email2', action: '/api/auth/signin/email2' }, credentials] })
    const ids = inputs(page).map((tag) => attr(tag, 'id')).filter((id) => id !== undefined)
    expect(ids).toHaveLength(4)
    expect(new Set(ids).size).toBe(4)
  })

  it('puts a divider between provider groups and none within the OAuth group', () => {
    const divider = /class="divider"/g
    expect(signIn({ providers: [github, google] }).match(divider)).toBeNull()
    expect(signIn({ providers: [github, google, email, credentials] }).match(divider)).toHaveLength(2)
    expect(signIn({ providers: [credentials, { ...credentials, id: 'other' }] }).match(divider)).toHaveLength(1)
  })

  it('says so plainly when there are no providers', () => {
    const page = signIn({ providers: [] })
    expect(forms(page)).toHaveLength(0)
    expect(page).toContain('No sign-in methods are configured.')
  })

  it.each([
    ['CredentialsSignin', 'Sign in failed. Check the details you provided are correct.'],
    ['MissingCSRF', 'The sign-in form expired. Please try again.'],
    ['SessionRequired', 'Please sign in to access this page.'],
    ['AccessDenied', 'You do not have permission to sign in.'],
    ['OAuthSignin', 'Try signing in with a different account.'],
    ['OAuthCallbackError', 'Try signing in with a different account.'],
    ['OAuthCreateAccount', 'Try signing in with a different account.'],
    ['EmailCreateAccount', 'Try signing in with a different account.'],
    ['Callback', 'Try signing in with a different account.'],
    ['Signin', 'Try signing in with a different account.'],
    ['OAuthAccountNotLinked', 'To confirm your identity, sign in with the same account you used originally.'],
    ['EmailSignin', 'The e-mail could not be sent.'],
    ['Verification', 'The sign-in link is no longer valid.'],
    ['Something', 'Unable to sign in.'],
    ['constructor', 'Unable to sign in.'],
    ['__proto__', 'Unable to sign in.'],
    ['toString', 'Unable to sign in.'],
  ])('shows error %s as an alert above the forms: %s', (code, message) => {
    expect(signInErrorMessage(code)).toBe(message)
    const page = signIn({ error: code })
    const alert = `<div class="alert" role="alert">${escapeHtml(message)}</div>`
    expect(page).toContain(alert)
    expect(page.indexOf(alert)).toBeLessThan(page.indexOf('<form'))
  })

  it('shows no alert without an error', () => {
    expect(signIn()).not.toContain('role="alert"')
    expect(signIn({ error: '' })).not.toContain('role="alert"')
  })

  it('never echoes an unknown error code', () => {
    const code = `Zq9${SCRIPT}${ATTR}`
    const page = signIn({ error: code })
    expectNoScript(page)
    expect(page).not.toContain('Zq9')
    expect(page).not.toContain('alert(1)')
    expect(page).not.toContain('onmouseover')
    expect(page).toContain('Unable to sign in.')
  })

  it('escapes a hostile provider name', () => {
    const page = signIn({ providers: [{ ...github, name: SCRIPT }, { ...email, name: ATTR }] })
    expectNoScript(page)
    expect(page).toContain(`Sign in with ${SCRIPT_ESCAPED}</button>`)
    expect(page).toContain(`Sign in with ${ATTR_ESCAPED}</button>`)
  })

  it('escapes hostile credential labels, placeholders and keys', () => {
    const provider: SignInPageProvider = {
      ...credentials,
      credentials: { [SCRIPT]: { label: STYLE, placeholder: ATTR }, [ATTR]: { label: SCRIPT, placeholder: SCRIPT } },
    }
    const page = signIn({ providers: [provider] })
    expectNoScript(page)
    expect(page).toContain(`name="${SCRIPT_ESCAPED}"`)
    expect(page).toContain(`name="${ATTR_ESCAPED}"`)
    expect(page).toContain('&lt;/style&gt;&lt;script&gt;</label>')
    expect(page).toContain(`${SCRIPT_ESCAPED}</label>`)
    expect(page).toContain(`placeholder="${ATTR_ESCAPED}"`)
    expect(page).toContain(`placeholder="${SCRIPT_ESCAPED}"`)
  })

  it('escapes a hostile csrfToken and callbackUrl in the hidden inputs', () => {
    const page = signIn({ csrfToken: ATTR, callbackUrl: SCRIPT })
    expectNoScript(page)
    const [form = ''] = forms(page)
    expect(inputNamed(form, 'csrfToken')).toBe(`<input type="hidden" name="csrfToken" value="${ATTR_ESCAPED}">`)
    expect(inputNamed(form, 'callbackUrl')).toBe(`<input type="hidden" name="callbackUrl" value="${SCRIPT_ESCAPED}">`)
  })

  it('survives a hostile theme', () => {
    const page = signIn({ theme: { brandColor: BAD_COLOR, buttonText: STYLE, logo: 'javascript:alert(1)' } })
    expectNoScript(page)
    expect(page).not.toContain('alert(1)')
    expect(page).not.toContain('javascript:')
    expect(css(page)).toContain('--brand:#346df1')
  })

  it('refuses to render a form whose action is not a path or an http(s) URL', () => {
    expect(() => signIn({ providers: [{ ...github, action: 'javascript:alert(1)' }] })).toThrow(TypeError)
    expect(() => signIn({ providers: [{ ...github, action: '//evil.example/signin' }] })).toThrow(TypeError)
  })
})

describe('sign-out page', () => {
  const props = { csrfToken: 'csrf-123', callbackUrl: '/bye', action: '/api/auth/signout', theme: {} }

  it('asks for confirmation with a POST form carrying csrfToken and callbackUrl', () => {
    const page = renderSignOutPage(props)
    expect(page).toContain('Are you sure you want to sign out?')
    const all = forms(page)
    expect(all).toHaveLength(1)
    const [form = ''] = all
    expect(form).toMatch(/^<form method="post" action="\/api\/auth\/signout">/)
    expect(inputNamed(form, 'csrfToken')).toBe('<input type="hidden" name="csrfToken" value="csrf-123">')
    expect(inputNamed(form, 'callbackUrl')).toBe('<input type="hidden" name="callbackUrl" value="/bye">')
    expect(form).toContain('<button type="submit">Sign out</button>')
  })

  it('escapes a hostile csrfToken and callbackUrl', () => {
    const page = renderSignOutPage({ ...props, csrfToken: SCRIPT, callbackUrl: ATTR })
    expectNoScript(page)
    expect(page).toContain(`value="${SCRIPT_ESCAPED}"`)
    expect(page).toContain(`value="${ATTR_ESCAPED}"`)
  })

  it('refuses a javascript: action', () => {
    expect(() => renderSignOutPage({ ...props, action: 'javascript:alert(1)' })).toThrow(TypeError)
  })
})

describe('error page', () => {
  const props = { homeUrl: 'https://app.example/', signInUrl: '/api/auth/signin', theme: {} }

  it('answers Configuration with 500 and no links but the way back to the app', () => {
    const { status, html: page } = renderErrorPage({ ...props, error: 'Configuration' })
    expect(status).toBe(500)
    expect(page).toContain('<h1>Server error</h1>')
    expect(page).toContain(
      'There is a problem with the server configuration. Check the server logs for more information.',
    )
    expect(page.match(/<a /g)).toHaveLength(1)
    expect(page).toContain('<p class="home"><a href="https://app.example/">← Back to app.example</a></p>')
  })

  it('answers AccessDenied with 403', () => {
    const { status, html: page } = renderErrorPage({ ...props, error: 'AccessDenied' })
    expect(status).toBe(403)
    expect(page).toContain('<h1>Access denied</h1>')
    expect(page).toContain('You do not have permission to sign in.')
  })

  it('answers Verification with 403 and a link to sign in', () => {
    const { status, html: page } = renderErrorPage({ ...props, error: 'Verification' })
    expect(status).toBe(403)
    expect(page).toContain('<h1>Unable to sign in</h1>')
    expect(page).toContain('The sign-in link is no longer valid. It may have been used already or it may have expired.')
    expect(page).toMatch(/<a [^>]*href="\/api\/auth\/signin"[^>]*>Sign in<\/a>/)
  })

  it.each([undefined, 'Default', 'Unknown', 'constructor'])('answers %s with 200 and a link home', (error) => {
    const { status, html: page } = renderErrorPage({ ...props, error })
    expect(status).toBe(200)
    expect(page).toContain('<h1>Error</h1>')
    expect(page).toContain('An unexpected error occurred.')
    expect(page).toMatch(/<a [^>]*href="https:\/\/app\.example\/"/)
  })

  it('never echoes an unknown error code', () => {
    const { status, html: page } = renderErrorPage({ ...props, error: `Zq9${SCRIPT}${ATTR}` })
    expect(status).toBe(200)
    expectNoScript(page)
    expect(page).not.toContain('Zq9')
    expect(page).not.toContain('alert(1)')
  })

  it('escapes link URLs and replaces unsafe ones with /', () => {
    const escaped = renderErrorPage({ ...props, homeUrl: '/?a=1&b="x"' }).html
    expect(escaped).toContain('href="/?a=1&amp;b=&quot;x&quot;"')
    const unsafe = renderErrorPage({ ...props, error: 'Verification', signInUrl: 'javascript:alert(1)' }).html
    expect(unsafe).not.toContain('javascript:')
    expect(unsafe).toMatch(/href="\/"[^>]*>Sign in</)
  })
})

describe('verify-request page', () => {
  it('tells the user to check their e-mail and links the site by its host', () => {
    const page = renderVerifyRequestPage({ homeUrl: 'https://app.example:8443/home', theme: {} })
    expect(page).toContain('<h1>Check your e-mail</h1>')
    expect(page).toContain('A sign-in link has been sent to your e-mail address.')
    expect(page).toContain('<a href="https://app.example:8443/home">app.example:8443</a>')
  })

  it('escapes a hostile home URL and drops an unsafe one', () => {
    const hostile = renderVerifyRequestPage({ homeUrl: `/${SCRIPT}`, theme: {} })
    expectNoScript(hostile)
    expect(hostile).toContain(`href="/${SCRIPT_ESCAPED}"`)
    const unsafe = renderVerifyRequestPage({ homeUrl: 'javascript:alert(1)', theme: {} })
    expect(unsafe).not.toContain('javascript:')
    expect(unsafe).toContain('<a href="/">/</a>')
  })
})

describe('every page', () => {
  const pages = {
    signIn: signIn(),
    signOut: renderSignOutPage({ csrfToken: 'c', callbackUrl: '/', action: '/api/auth/signout', theme: {} }),
    error: renderErrorPage({ homeUrl: '/', signInUrl: '/api/auth/signin', theme: {} }).html,
    verifyRequest: renderVerifyRequestPage({ homeUrl: '/', theme: {} }),
  }

  it.each(Object.entries(pages))('%s is a complete HTML5 document without scripts', (_name, page) => {
    expect(page.startsWith('<!doctype html>\n<html lang="en">')).toBe(true)
    expect(page).toContain('<meta charset="utf-8">')
    expect(page).toContain('name="viewport"')
    expect(page).toMatch(/<title>[^<]+<\/title>/)
    expect(page.trimEnd().endsWith('</html>')).toBe(true)
    expectNoScript(page)
  })
})

describe('the way back to the app', () => {
  const home = 'https://app.example/account'
  const base = { csrfToken: 'c', theme: {}, homeUrl: home }
  const password = { ...base, action: '/api/auth/x', signInUrl: '/api/auth/signin', minLength: 8, maxLength: 64 }
  const script = { src: '/api/auth/webauthn.js', integrity: 'sha256-x' }
  const pages: [string, string][] = [
    ['sign-in', renderSignInPage({ ...base, providers: [], callbackUrl: '/' })],
    ['sign-out', renderSignOutPage({ ...base, callbackUrl: '/', action: '/api/auth/signout' })],
    ['e-mail confirmation', renderEmailConfirmPage({ ...base, email: 'a@example.com', action: '/api/auth/callback/email', fields: {} })],
    ['sessions', renderSessionsPage({ ...base, sessions: [], basePath: '/api/auth' })],
    ['passkeys', renderPasskeysPage({ ...base, passkeys: [], basePath: '/api/auth', providerId: 'passkey', script })],
    ['second step', renderTwoFactorPage({ ...base, action: '/api/auth/two-factor', signInUrl: '/api/auth/signin' })],
    ['second-factor settings', renderTwoFactorSetupPage({ ...base, state: 'enrolled', recoveryCodesLeft: 3, basePath: '/api/auth', next: '/' })],
    ['sign-up', renderSignUpPage({ ...password, callbackUrl: '/' })],
    ['forgotten password', renderForgotPasswordPage(password)],
    ['reset password', renderResetPasswordPage({ ...password, token: 't', email: 'a@example.com' })],
    ['error', renderErrorPage({ ...base, error: 'AccessDenied', signInUrl: '/api/auth/signin' }).html],
  ]

  it.each(pages)('the %s page links back under its card, and links an empty icon', (_name, page) => {
    expect(page).toContain('</div>\n<p class="home"><a href="https://app.example/account">← Back to app.example</a></p>\n</main>')
    expect(page).toContain('<link rel="icon" href="data:,">')
  })

  it('leaves the link out when the URL is not safe, and names no host for a path', () => {
    expect(renderLayout({ title: 't', theme: {}, body: html`x`, home: 'javascript:alert(1)' })).not.toContain('class="home"')
    expect(renderLayout({ title: 't', theme: {}, body: html`x`, home: '/account' })).toContain('<a href="/account">← Back to the site</a>')
  })
})

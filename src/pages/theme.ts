/**
 * The look shared by the built-in pages: theme validation and the HTML document around each page.
 *
 * Theme colours are written into a `<style>` element, where HTML escaping does not apply (the
 * parser reads raw text up to `</style>`), so they are validated against a conservative colour
 * syntax instead and replaced by the default when they do not match.
 */
import type { Theme } from '../types.js'
import { html, raw, type SafeHtml } from './html.js'

/** Buttons and links when the theme sets no valid `brandColor`. */
export const DEFAULT_BRAND_COLOR = '#346df1'

/** Button text when the theme sets no valid `buttonText`. */
export const DEFAULT_BUTTON_TEXT = '#fff'

/** A theme with every value validated and defaulted. */
export interface ResolvedTheme {
  colorScheme: 'auto' | 'light' | 'dark'
  brandColor: string
  buttonText: string
  /** The logo URL, or `undefined` when none was given or it was not a safe URL. */
  logo: string | undefined
}

const HEX_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i
// Digits, %, commas, dots and spaces only: no `;`, `}`, `<`, quotes or nested functions.
const FUNCTION_COLOR = /^(?:rgba?|hsla?)\([0-9%., ]+\)$/i
// The longest named colour, `lightgoldenrodyellow`, has 20 letters.
const NAMED_COLOR = /^[a-z]{1,32}$/i

/**
 * Whether a value is a CSS colour in the conservative syntax the pages accept: `#hex` (3, 4, 6 or
 * 8 digits), `rgb()`/`rgba()`/`hsl()`/`hsla()` with digits, `%`, commas, dots and spaces, or a
 * plain alphabetic colour name. Surrounding whitespace is ignored.
 *
 * @param value The candidate colour.
 * @returns `true` if it can be written into CSS without leaving the declaration.
 * @example
 * isSafeCssColor('#2563eb') // true
 * isSafeCssColor('red;}</style>') // false
 * @see https://www.w3.org/TR/css-color-4/#typedef-color
 */
export function isSafeCssColor(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const colour = value.trim()
  return HEX_COLOR.test(colour) || FUNCTION_COLOR.test(colour) || NAMED_COLOR.test(colour)
}

/**
 * Whether a URL may be used in a page's `href`, `src` or form `action`: an absolute `http:` or
 * `https:` URL, or a path starting with a single `/`. Everything else (`javascript:`, `data:`,
 * protocol-relative `//host`, relative paths) is refused.
 *
 * @param value The candidate URL.
 * @returns `true` if the URL is safe to put in a link or form.
 * @example
 * isSafePageUrl('/api/auth/signin') // true
 * isSafePageUrl('javascript:alert(1)') // false
 * @see https://url.spec.whatwg.org/#url-parsing
 */
export function isSafePageUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value === '') return false
  // Browsers drop tabs and newlines from URLs and read `\` as `/`, so `/\evil.example` or
  // `/<tab>/evil.example` would turn into the protocol-relative `//evil.example`. Refuse them all.
  if (/[\s\\\u0000-\u001f\u007f]/.test(value)) return false
  if (value.startsWith('/')) return !value.startsWith('//')
  if (!/^https?:\/\//i.test(value)) return false
  return URL.canParse(value)
}

/**
 * Validates a theme and fills in the defaults. Invalid values are ignored rather than thrown: a
 * bad colour should not take the sign-in page down.
 *
 * @param theme The theme from the configuration.
 * @returns The validated theme.
 * @example
 * resolveTheme({ brandColor: 'red;}' }).brandColor // '#346df1'
 */
export function resolveTheme(theme: Theme): ResolvedTheme {
  const scheme = theme.colorScheme
  return Object.freeze({
    colorScheme: scheme === 'light' || scheme === 'dark' ? scheme : 'auto',
    brandColor: isSafeCssColor(theme.brandColor) ? theme.brandColor.trim() : DEFAULT_BRAND_COLOR,
    buttonText: isSafeCssColor(theme.buttonText) ? theme.buttonText.trim() : DEFAULT_BUTTON_TEXT,
    logo: isSafePageUrl(theme.logo) ? theme.logo : undefined,
  })
}

const LIGHT =
  'color-scheme:light;--bg:#f4f5f7;--card:#fff;--text:#1f2328;--muted:#636c76;--border:#d0d7de;' +
  '--input:#fff;--alert-bg:#fff1f0;--alert-text:#a40e26;--alert-border:#ffc9c5;' +
  '--notice-bg:#effaf3;--notice-text:#14632d;--notice-border:#b5e3c4;--link:var(--brand)'
const DARK =
  'color-scheme:dark;--bg:#0d1117;--card:#161b22;--text:#e6edf3;--muted:#8d96a0;--border:#30363d;' +
  '--input:#0d1117;--alert-bg:#3d1114;--alert-text:#ffb3ad;--alert-border:#6e1a21;' +
  '--notice-bg:#0f2a18;--notice-text:#9be3b0;--notice-border:#1f5130;' +
  // A brand colour chosen for a light page is often too dark to read as text on the dark card.
  '--link:color-mix(in srgb,var(--brand) 60%,#fff)'

function schemeCss(scheme: ResolvedTheme['colorScheme']): string {
  if (scheme === 'light') return `:root{${LIGHT}}`
  if (scheme === 'dark') return `:root{${DARK}}`
  return `:root{${LIGHT}}@media (prefers-color-scheme: dark){:root{${DARK}}}`
}

// Inputs use 1rem text so iOS Safari does not zoom in when one is focused.
const BASE_CSS = `
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
form+p{margin-top:1rem}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:2rem 1rem;
background:var(--bg);color:var(--text);line-height:1.5;-webkit-text-size-adjust:100%;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{width:100%;max-width:23rem}
.logo{display:block;margin:0 auto 1.5rem;max-width:12rem;max-height:4.5rem}
.card{background:var(--card);border:1px solid var(--border);border-radius:.75rem;padding:2rem 1.5rem;
box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.375rem;line-height:1.3;margin:0 0 1rem;text-align:center}
h2{font-size:1rem;line-height:1.3;margin:1.5rem 0 .5rem}
section>p{text-align:left}
input[type=checkbox]{display:inline;width:auto;margin-right:.375rem}
p{margin:0 0 1rem;text-align:center}
p:last-child{margin-bottom:0}
a{color:var(--link)}
.group>.alert{margin-bottom:.25rem}
.group,form{display:flex;flex-direction:column;gap:.75rem}
label{display:block;font-size:.875rem;font-weight:600;margin-bottom:.25rem}
input,select{display:block;width:100%;padding:.625rem .75rem;font:inherit;font-size:1rem;color:var(--text);
background:var(--input);border:1px solid var(--border);border-radius:.5rem}
input:focus,select:focus{outline:2px solid var(--brand);outline-offset:-1px;border-color:var(--brand)}
button,.button{display:block;width:100%;padding:.7rem 1rem;font:inherit;font-weight:600;text-align:center;
text-decoration:none;color:var(--button-text);background:var(--brand);border:0;border-radius:.5rem;cursor:pointer}
button:hover,.button:hover{filter:brightness(1.1)}
button:focus-visible,.button:focus-visible{outline:2px solid var(--text);outline-offset:2px}
.divider{display:flex;align-items:center;gap:.75rem;margin:1.5rem 0;color:var(--muted);font-size:.875rem}
.divider::before,.divider::after{content:"";flex:1;border-top:1px solid var(--border)}
.alert{margin:0 0 1.5rem;padding:.75rem 1rem;border:1px solid var(--alert-border);border-radius:.5rem;
background:var(--alert-bg);color:var(--alert-text);text-align:center}
.alert[role=status]{border-color:var(--notice-border);background:var(--notice-bg);color:var(--notice-text)}
.sessions{list-style:none;margin:0 0 1.5rem;padding:0}
.sessions li{padding:.75rem 0;border-top:1px solid var(--border)}
.sessions li:last-child{border-bottom:1px solid var(--border)}
.qr{display:block;width:12rem;height:12rem;margin:0 auto 1rem;background:#fff;border-radius:.5rem}
.qr svg{display:block;width:100%;height:100%}
code.secret{display:block;margin:0 0 1rem;text-align:center;font-size:1rem;letter-spacing:.05em;word-break:break-all}
.codes{list-style:none;margin:0 0 1rem;padding:0;display:grid;grid-template-columns:1fr 1fr;gap:.25rem .75rem;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;text-align:center}
.sessions small{display:block;color:var(--muted);font-size:.8125rem}
.sessions form{margin-top:.5rem}
.secondary{color:var(--link);background:transparent;border:1px solid var(--border);padding:.45rem .75rem;font-size:.875rem}
.stack{display:flex;flex-direction:column;gap:.75rem}
.status{margin:0;min-height:1.25rem;color:var(--muted);font-size:.875rem;text-align:center}
.status:empty{display:none}
.hint{display:block;margin-top:.25rem;color:var(--muted);font-size:.8125rem}
.links{display:flex;justify-content:space-between;gap:.75rem;margin:0;font-size:.875rem}
.home{margin:1.25rem 0 0;font-size:.875rem}
.home a{color:var(--muted)}
.impersonating{position:fixed;top:0;left:0;right:0;z-index:1;margin:0;padding:.5rem 1rem;text-align:center;font-size:.875rem;
background:var(--alert-bg);color:var(--alert-text);border-bottom:1px solid var(--alert-border)}
body:has(.impersonating){padding-top:4.5rem}
`

/** A script a page loads (the passkey script): its URL, a path or http(s) URL, and its Subresource Integrity value. */
export interface PageScript {
  src: string
  integrity: string
}

/**
 * Wraps a page body in the shared HTML5 document: head, inline themed CSS, optional logo and card.
 *
 * @param opts.title The document title (escaped).
 * @param opts.theme The theme from the configuration; invalid values fall back to the defaults.
 * @param opts.css A page's own rules after the shared ones (a constant of the library's, never user input: it is not escaped).
 * @param opts.body The page content, built with `html`.
 * @param opts.script A script to load (the passkey script), deferred, with its integrity value.
 * @param opts.home The app's page to link back to under the card ("Back to …"); an unsafe URL is left out.
 * @returns The complete HTML document.
 * @example
 * renderLayout({ title: 'Sign out', theme: {}, body: html`<h1>Sign out</h1>`, home: 'https://example.com/' })
 */
export function renderLayout(opts: { title: string; theme: Theme; body: SafeHtml; script?: PageScript | undefined; home?: string | undefined; css?: string | undefined }): string {
  if (opts.script !== undefined && !isSafePageUrl(opts.script.src)) throw new TypeError('Page script: src must be a path or an http(s) URL.')
  const theme = resolveTheme(opts.theme)
  // Safe as raw CSS: every interpolated value passed isSafeCssColor, which admits no `<`, `;` or `}`.
  const css =
    `:root{--brand:${theme.brandColor};--button-text:${theme.buttonText}}` +
    schemeCss(theme.colorScheme) +
    BASE_CSS +
    (opts.css ?? '')
  const metaScheme = theme.colorScheme === 'auto' ? 'light dark' : theme.colorScheme
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="${metaScheme}">
<title>${opts.title}</title>
<link rel="icon" href="data:,">
<style>${raw(css)}</style>
${opts.script !== undefined && html`<script src="${opts.script.src}" integrity="${opts.script.integrity}" defer></script>`}
</head>
<body>
<main>
${theme.logo !== undefined && html`<img class="logo" src="${theme.logo}" alt="">`}
<div class="card">
${opts.body}
</div>
${opts.home !== undefined && isSafePageUrl(opts.home) && html`<p class="home"><a href="${opts.home}">← Back to ${siteName(opts.home)}</a></p>`}
</main>
</body>
</html>
`.__html
}

// The host of an absolute URL ("example.com"); a path has no host to show.
function siteName(url: string): string {
  return /^https?:\/\//i.test(url) && URL.canParse(url) ? new URL(url).host : 'the site'
}

/**
 * The built-in error page (GET `/error?error=Code`). Only known codes change the text; any other
 * value gets the default page and is never echoed.
 */
import type { Theme } from '../types.js'
import { html, type SafeHtml } from './html.js'
import { isSafePageUrl, renderLayout } from './theme.js'

/** What the error page needs. */
export interface ErrorPageProps {
  /** The `error` query parameter, e.g. `Configuration`, `AccessDenied`, `Verification`. */
  error?: string
  /** The app's home page (`pages.home`, or the site's root): linked from the default page, or under the card. */
  homeUrl: string
  /** The sign-in page, linked from the `Verification` and `RateLimited` pages. */
  signInUrl: string
  /** `RateLimited`: seconds until another attempt may succeed (the `Retry-After`), for the message. */
  retryAfterSeconds?: number
  theme: Theme
}

/** The rendered error page and the HTTP status to send it with. */
export interface ErrorPageResult {
  status: number
  html: string
}

interface ErrorContent {
  status: number
  heading: string
  message: string
  /** A second sentence that depends on the request. */
  detail?: (props: ErrorPageProps) => string | undefined
  link?: (props: ErrorPageProps) => SafeHtml
  /** Its link is the home page already: no "Back to …" under the card. */
  linksHome?: true
}

// A link that fails the URL check falls back to `/`: the error page must render whatever happens.
const link = (url: string, text: string): SafeHtml =>
  html`<p><a class="button" href="${isSafePageUrl(url) ? url : '/'}">${text}</a></p>`

const DEFAULT: ErrorContent = {
  status: 200,
  heading: 'Error',
  message: 'An unexpected error occurred.',
  link: (props) => link(props.homeUrl, 'Go to the home page'),
  linksHome: true,
}

// A Map, not an object literal: a code such as `constructor` must not find an entry.
const CONTENT = new Map<string, ErrorContent>([
  [
    'Configuration',
    {
      status: 500,
      heading: 'Server error',
      message: 'There is a problem with the server configuration. Check the server logs for more information.',
    },
  ],
  [
    'AdapterError',
    {
      status: 503,
      heading: 'Service unavailable',
      message: 'Sign-in is temporarily unavailable. Please try again in a moment.',
      link: (props) => link(props.homeUrl, 'Go to the home page'),
      linksHome: true,
    },
  ],
  ['AccessDenied', { status: 403, heading: 'Access denied', message: 'You do not have permission to sign in.' }],
  ['Impersonating', { status: 403, heading: 'Not while impersonating', message: 'You are signed in as this user by impersonation: their password, address, second factor, passkeys and linked accounts stay as they are.' }],
  [
    'Verification',
    {
      status: 403,
      heading: 'Unable to sign in',
      message: 'The sign-in link is no longer valid. It may have been used already or it may have expired.',
      link: (props) => link(props.signInUrl, 'Sign in'),
    },
  ],
  [
    'RateLimited',
    {
      status: 429,
      heading: 'Too many attempts',
      message: 'There were too many sign-in attempts.',
      detail: (props) => `Please wait ${waitText(props.retryAfterSeconds)} before trying again.`,
      link: (props) => link(props.signInUrl, 'Back to sign in'),
    },
  ],
])

// "about 3 minutes", "30 seconds"; "a few minutes" when the wait is not known.
function waitText(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return 'a few minutes'
  if (seconds < 60) return `${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}`
  const minutes = Math.ceil(seconds / 60)
  return `about ${minutes} minute${minutes === 1 ? '' : 's'}`
}

/**
 * Renders the error page: status 500 for `Configuration`, 503 for `AdapterError`, 403 for
 * `AccessDenied` and `Verification`, 429 for `RateLimited`, 200 with a generic message for anything else.
 *
 * @param props Error code, home and sign-in URLs, theme.
 * @returns The status and the complete HTML document.
 * @example
 * renderErrorPage({ error: 'AccessDenied', homeUrl: '/', signInUrl: '/api/auth/signin', theme: {} }).status // 403
 */
export function renderErrorPage(props: ErrorPageProps): ErrorPageResult {
  const content = (props.error !== undefined && CONTENT.get(props.error)) || DEFAULT
  const detail = content.detail?.(props)
  const body = html`<h1>${content.heading}</h1>
<p>${content.message}${detail === undefined ? '' : ` ${detail}`}</p>
${content.link?.(props)}`
  return { status: content.status, html: renderLayout({ title: content.heading, theme: props.theme, body, home: content.linksHome ? undefined : props.homeUrl }) }
}

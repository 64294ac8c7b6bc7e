/**
 * The built-in "check your e-mail" page (GET `/verify-request`), shown after an e-mail sign-in
 * link has been sent.
 */
import type { Theme } from '../types.js'
import { html } from './html.js'
import { isSafePageUrl, renderLayout } from './theme.js'

/** What the verify-request page needs. */
export interface VerifyRequestPageProps {
  /** The site's home page; the link shows its host. */
  homeUrl: string
  /** What was mailed: a sign-in link (default), the link that finishes signing up, or a password reset link. */
  type?: 'email' | 'signup' | 'reset' | undefined
  theme: Theme
}

/**
 * Renders the page that asks the user to check their e-mail.
 *
 * @param props Home URL and theme.
 * @returns The complete HTML document.
 * @example
 * renderVerifyRequestPage({ homeUrl: 'https://example.com', theme: {} }) // links "example.com"
 */
export function renderVerifyRequestPage(props: VerifyRequestPageProps): string {
  // An unsafe URL falls back to `/`: this page must render whatever happens.
  const href = isSafePageUrl(props.homeUrl) ? props.homeUrl : '/'
  const body = html`<h1>Check your e-mail</h1>
<p>${MESSAGES[props.type ?? 'email']}</p>
<p><a href="${href}">${hostOf(href)}</a></p>`
  return renderLayout({ title: 'Check your e-mail', theme: props.theme, body })
}

// Phrased so that they say nothing about whether the address has an account.
const MESSAGES = {
  email: 'A sign-in link has been sent to your e-mail address.',
  signup: 'We sent a link to your e-mail address: open it to finish signing up. Nothing came? Check the spam folder, or sign in if you already have an account.',
  reset: 'If the address has an account, we sent it a link to choose a new password. It works once, for a limited time.',
} as const

// A path has no host of its own; show it as it is.
function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url
}

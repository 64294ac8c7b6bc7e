/**
 * The page after a sign-in that restored an account in its deletion grace period (GET
 * `/account/restored`): it says so, and links on to where the sign-in was going.
 */
import type { Theme } from '../../../types.js'
import { html } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** What the restored page needs. */
export interface RestoredPageProps {
  /** Where the sign-in was going (checked by the `redirect` callback). */
  continueUrl: string
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the restored page.
 * @throws {TypeError} If `continueUrl` is not a `/` path or an http(s) URL.
 * @example
 * renderRestoredPage({ continueUrl: 'https://example.com/', theme: {} })
 */
export function renderRestoredPage(props: RestoredPageProps): string {
  if (!isSafePageUrl(props.continueUrl)) throw new TypeError('Restored page: the continue link must be a path or an http(s) URL.')
  const body = html`<h1>Your account was restored</h1>
<div class="alert" role="status">You signed in before your account's deletion: it will not be deleted, and everything is as it was.</div>
<p><a href="${props.continueUrl}">Continue</a></p>`
  return renderLayout({ title: 'Your account was restored', theme: props.theme, body, home: props.homeUrl })
}

/**
 * The built-in sessions page (GET `/sessions`): the signed-in user's sessions on every device, with a
 * button to end each one, the others, or all. Every button is a CSRF-checked POST form.
 */
import type { SessionInfo, Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

/** What the sessions page needs. */
export interface SessionsPageProps {
  sessions: readonly SessionInfo[]
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`: the forms post to `<basePath>/sessions/…`. */
  basePath: string
  theme: Theme
  /** Where the page's "Back to …" link leads: the app's `pages.home`, or the site's root. */
  homeUrl?: string | undefined
}

/**
 * Renders the sessions page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderSessionsPage({ sessions: [], csrfToken: 'token', basePath: '/api/auth', theme: {} })
 */
export function renderSessionsPage(props: SessionsPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('Sessions page: basePath must be a path or an http(s) URL.')
  const others = props.sessions.filter((session) => !session.current).length
  const rows = props.sessions.map((session) => sessionRow(session, props))
  const body = html`<h1>Your sessions</h1>
<p>${props.sessions.length === 1 ? 'You are signed in on this device only.' : `You are signed in on ${props.sessions.length} devices or browsers.`}</p>
<ul class="sessions">${rows}</ul>
<div class="stack">
${others > 0 ? form(props, '/sessions/revoke-others', 'Sign out all other devices') : ''}
${form(props, '/sessions/signout-everywhere', 'Sign out everywhere')}
</div>`
  return renderLayout({ title: 'Your sessions', theme: props.theme, body, home: props.homeUrl })
}

function sessionRow(session: SessionInfo, props: SessionsPageProps): SafeHtml {
  const seen = session.lastSeenAt ?? session.createdAt
  return html`<li data-session-id="${session.id}">
<strong>${describeAgent(session.userAgent)}</strong>${session.current ? html` <em>(this device)</em>` : ''}
<small>${session.ipAddress ?? 'address unknown'}${seen ? ` · last active ${day(seen)}` : ''}</small>
${session.createdAt ? html`<small>signed in ${day(session.createdAt)}</small>` : ''}
${session.current ? '' : form(props, '/sessions/revoke', 'Sign out this device', session.id, 'secondary')}
</li>`
}

function form(props: SessionsPageProps, path: string, label: string, id?: string, style?: 'secondary'): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
${id === undefined ? '' : html`<input type="hidden" name="id" value="${id}">`}
<button type="submit"${style ? html` class="${style}"` : ''}>${label}</button>
</form>`
}

/** "Firefox on Windows" from a User-Agent; the raw string's first words when neither is recognised. */
export function describeAgent(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser'
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /OPR\//.test(userAgent)
      ? 'Opera'
      : /Firefox\//.test(userAgent)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(userAgent)
          ? 'Chrome'
          : /Safari\//.test(userAgent)
            ? 'Safari'
            : undefined
  const system = /Windows/.test(userAgent)
    ? 'Windows'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Android/.test(userAgent)
        ? 'Android'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : undefined
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system ?? userAgent.slice(0, 60)
}

function day(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}

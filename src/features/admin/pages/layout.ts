/**
 * What the admin pages share: the themed layout, widened for tables (the other pages are one narrow
 * card), the dates they show, and the page that says why there is nothing to show (403, 404).
 */
import type { Theme } from '../../../types.js'
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'

// The core layout's card is 23rem wide, for one form. The admin pages hold a table and many forms:
// these rules widen the card and lay those out, in the theme's own colours (its CSS variables).
const ADMIN_CSS = `
main{max-width:68rem}
.admin{overflow-wrap:break-word}
.admin h1{text-align:left;overflow-wrap:anywhere}
.admin p{text-align:left}
.admin .scroll{overflow-x:auto;margin:0 0 1rem}
.admin table{width:100%;border-collapse:collapse;font-size:.875rem}
.admin th,.admin td{padding:.5rem;border-top:1px solid var(--border);text-align:left;vertical-align:top;overflow-wrap:break-word}
.admin th{font-weight:600;color:var(--muted);white-space:nowrap}
.admin td.address{min-width:12rem;overflow-wrap:anywhere}
.admin td.when{white-space:nowrap}
.admin form.search{flex-direction:row;align-items:flex-end;margin:0 0 1rem}
.admin form.search div{flex:1}
.admin button{width:auto;align-self:flex-start}
.admin form.search button{align-self:flex-end;padding:.625rem 1.25rem;border:1px solid transparent}
.admin .pager{display:flex;justify-content:space-between;gap:1rem;font-size:.875rem}
.admin dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
.admin dt{font-weight:600;color:var(--muted)}
.admin dd{margin:0;overflow-wrap:anywhere}
@media (max-width:30rem){.admin dl{grid-template-columns:1fr;gap:0}.admin dd{margin-bottom:.5rem}}
.admin .actions{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(19rem,100%),1fr));gap:1rem;margin:0 0 1.5rem}
.admin .actions section{border:1px solid var(--border);border-radius:.5rem;padding:1rem}
.admin .actions h2{margin:0 0 .5rem}
.admin .actions p{font-size:.875rem}
.admin fieldset{border:0;margin:0;padding:0;display:flex;flex-direction:column;gap:.375rem}
.admin legend{padding:0;margin:0 0 .25rem;font-size:.875rem}
.admin .checks label{font-weight:400;margin:0}
.admin .danger{border-color:var(--alert-border)}
.admin .muted{color:var(--muted)}
`

/** The page `body` in the admin layout, titled `title`. */
export function renderAdminLayout(opts: { title: string; theme: Theme; body: SafeHtml; homeUrl?: string | undefined }): string {
  return renderLayout({ title: opts.title, theme: opts.theme, body: html`<div class="admin">${opts.body}</div>`, home: opts.homeUrl, css: ADMIN_CSS })
}

/** `date` as the admin pages show it: `2027-01-08 14:05 UTC`. */
export function shownDate(date: Date | string): string {
  const value = new Date(date)
  return Number.isNaN(value.getTime()) ? '' : `${value.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** What the admin message page needs. */
export interface AdminMessagePageProps {
  heading: string
  message: string
  /** A link on (the users list, the sign-in page); an unsafe URL is left out. */
  link?: { href: string; text: string } | undefined
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * The page that says why an admin page shows nothing: a caller without the permission (403), no
 * such user (404).
 * @example
 * renderAdminMessagePage({ heading: 'Access denied', message: 'Your account may not use the admin pages.', theme: {} })
 */
export function renderAdminMessagePage(props: AdminMessagePageProps): string {
  const link = props.link && isSafePageUrl(props.link.href) ? html`<p><a href="${props.link.href}">${props.link.text}</a></p>` : ''
  const body = html`<h1>${props.heading}</h1>
<p>${props.message}</p>
${link}`
  return renderLayout({ title: props.heading, theme: props.theme, body, home: props.homeUrl })
}

/**
 * The default sign-in e-mail: a subject, an HTML part styled like the built-in pages, and a text
 * part. It shows the site's host name (from the link, which comes from `AUTH_URL` or a trusted
 * host) and the link; nothing the user typed appears in it, and every value in the HTML is escaped.
 */
import { html, raw, type SafeHtml } from '../pages/html.js'
import { resolveTheme } from '../pages/theme.js'
import type { Theme } from '../types.js'

/** A rendered sign-in e-mail. */
export interface VerificationEmail {
  subject: string
  text: string
  html: string
}

/**
 * Renders the sign-in e-mail for `url`.
 *
 * @param params.url The sign-in link.
 * @param params.theme The configured theme: its brand colour and button text colour (validated, so
 *   they are safe in CSS), and its logo.
 * @example
 * renderVerificationEmail({ url: 'https://example.com/api/auth/callback/email?token=…', theme: {} }).subject
 * // 'Sign in to example.com'
 */
export function renderVerificationEmail(params: { url: string; theme: Theme }): VerificationEmail {
  const host = new URL(params.url).host
  return renderLinkEmail({
    url: params.url,
    theme: params.theme,
    subject: `Sign in to ${host}`,
    heading: ['Sign in to ', host],
    button: 'Sign in',
    note: 'The link works once. If you did not ask for it, you can ignore this e-mail.',
  })
}

/** What a mail with one link says: its subject, its heading (text, then the host in bold), the button and the note under it. */
export interface LinkEmailContent {
  url: string
  theme: Theme
  subject: string
  /** The heading as [before, bold part]. */
  heading: readonly [string, string]
  button: string
  /** One or more paragraphs of plain text under the link. */
  note: string | readonly string[]
}

/**
 * Renders a mail whose point is one link (sign in, verify an address, reset a password): the
 * heading, a button, the link spelled out, and the note. Every value is escaped in the HTML.
 *
 * @example
 * renderLinkEmail({ url: 'https://example.com/x', theme: {}, subject: 'Hi', heading: ['Hi from ', 'example.com'], button: 'Open', note: 'Bye.' }).text
 */
export function renderLinkEmail(content: LinkEmailContent): VerificationEmail {
  const { url, subject } = content
  const theme = resolveTheme(content.theme)
  const notes = typeof content.note === 'string' ? [content.note] : content.note
  const text = `${content.heading.join('')}\n\n${url}\n\n${notes.join('\n\n')}\n`
  // Mail clients drop <style> and CSS variables: inline styles, table layout, one colour each.
  // The colours passed isSafeCssColor (resolveTheme), which admits no quote, `;` or `<`.
  const brand = theme.brandColor
  const buttonText = theme.buttonText
  // A page may use a path (`/logo.png`); a mail client has no page to resolve it against.
  const logo = theme.logo === undefined ? undefined : new URL(theme.logo, url).href
  const body = html`${mailHead(subject)}<body style="margin:0;padding:0;background:#f4f5f7">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" style="background:#f4f5f7">
<tr><td align="center" style="padding:32px 16px">
${logo !== undefined && html`<img src="${logo}" alt="" style="display:block;max-width:192px;max-height:72px;margin:0 auto 24px">`}
<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" style="max-width:480px;background:#ffffff;border:1px solid #d0d7de;border-radius:12px">
<tr><td align="center" style="padding:32px 24px;font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2328">
<h1 style="margin:0 0 16px;font-size:22px;line-height:1.3;font-weight:600">${content.heading[0]}<strong>${content.heading[1]}</strong></h1>
<table role="presentation" cellspacing="0" cellpadding="0" border="0"><tr>
<td align="center" style="border-radius:8px;background:${raw(brand)}"><a href="${url}" target="_blank" style="display:inline-block;padding:12px 24px;font-size:16px;font-weight:600;color:${raw(buttonText)};text-decoration:none;border-radius:8px;border:1px solid ${raw(brand)}">${content.button}</a></td>
</tr></table>
<p style="margin:24px 0 0;font-size:14px;line-height:1.5;color:#636c76">Or open this link: <a href="${url}" style="color:${raw(brand)};word-break:break-all">${url}</a></p>
${notes.map((note) => html`<p style="margin:16px 0 0;font-size:14px;line-height:1.5;color:#636c76">${note}</p>\n`)}</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`
  return { subject, text, html: body.__html }
}

/** The document head every mail Portcullis sends starts with (its body is inline-styled: mail clients drop <style>). */
export function mailHead(subject: string): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${subject}</title>
</head>
`
}

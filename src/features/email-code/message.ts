/**
 * The sign-in code's mail: a subject, a text part and an HTML part styled like the built-in pages.
 * It shows the site's host and the code; nothing the user typed appears in it, every value in the
 * HTML is escaped, and the subject carries no code (lock screens show subjects).
 */
import { mailHead, type VerificationEmail } from '../../mail/message.js'
import { html, raw } from '../../pages/html.js'
import { resolveTheme } from '../../pages/theme.js'
import type { Theme } from '../../types.js'

/**
 * Renders the mail of `code` for `host`.
 * @example
 * renderCodeEmail({ code: '042917', host: 'example.com', minutes: 10, theme: {} }).subject // 'Your sign-in code for example.com'
 */
export function renderCodeEmail(params: { code: string; host: string; minutes: number; theme: Theme }): VerificationEmail {
  const { code, host, minutes } = params
  const theme = resolveTheme(params.theme)
  const subject = `Your sign-in code for ${host}`
  const note = `It works once, for ${minutes} minutes, in the browser where you asked for it. If you did not ask for it, you can ignore this e-mail.`
  const text = `Your code to sign in to ${host}:\n\n${code}\n\n${note}\n`
  // Mail clients drop <style>: inline styles, one colour each (resolveTheme's colours admit no quote, `;` or `<`).
  const body = html`${mailHead(subject)}<body style="margin:0;padding:32px 16px;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2328">
<div style="max-width:480px;margin:0 auto;padding:32px 24px;background:#ffffff;border:1px solid #d0d7de;border-radius:12px;text-align:center">
<h1 style="margin:0 0 16px;font-size:22px;font-weight:600">Sign in to <strong>${host}</strong></h1>
<p style="margin:0;font-size:32px;font-weight:700;letter-spacing:6px;color:${raw(theme.brandColor)}">${code}</p>
<p style="margin:24px 0 0;font-size:14px;line-height:1.5;color:#636c76">${note}</p>
</div>
</body>
</html>
`
  return { subject, text, html: body.__html }
}

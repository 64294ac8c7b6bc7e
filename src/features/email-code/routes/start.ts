/**
 * POST /signin/<id> of a sign-in code provider (after the core's CSRF check), and the server-side
 * `signIn('<id>', { email })`: the address normalised, the request counted against the client and
 * the address (rate limit), the `signIn` callback asked (`email.verificationRequest`), the code
 * stored hashed and mailed, and the page asking for it, with the cookie binding it to this browser.
 *
 * The answer is the same whether the address belongs to a user or not (no account enumeration), as
 * for links: the code's sign-in creates the user.
 */
import { authUrl, issueCsrf, pageUrl, type ActionContext } from '../../../actions/context.js'
import { EmailSignInError } from '../../../errors.js'
import { describeError, redactError } from '../../../events.js'
import type { AuthResponse } from '../../../http/respond.js'
import { sendEmail } from '../../../mail/transport.js'
import type { EmailAdapter } from '../../../sign-in/users.js'
import { askToMail } from '../../email/sign-in.js'
import { bindingCookie, newCode, storeCode, type CodeAdapter } from '../../../mail/code.js'
import { renderCodeEmail } from '../message.js'
import { renderEmailCodePage } from '../page.js'
import type { EmailCodeProvider } from '../provider.js'

export type EmailCodeAdapter = EmailAdapter & CodeAdapter

/**
 * Mails a sign-in code for `input.email` and answers with the page asking for it.
 * @throws EmailSignInError when the address is refused or the mail could not be sent; AccessDeniedError
 *   when the `signIn` callback refuses; RateLimitedError; UntrustedHostError; AdapterError.
 */
export async function mailSignInCode(ctx: ActionContext, provider: EmailCodeProvider, input: { email: unknown; callbackUrl: string }): Promise<AuthResponse> {
  // The link's steps first (the mail names the site, so its host must be trusted as a link's).
  const { identifier, elsewhere } = await askToMail(ctx, provider, input.email)
  if (elsewhere) return elsewhere
  const adapter = ctx.config.adapter as EmailCodeAdapter

  const code = newCode()
  const expires = new Date(Date.now() + provider.maxAge * 1000)
  const stored = await storeCode(adapter, ctx.config.secrets[0]!, identifier, code, expires)
  try {
    await sendCode(ctx, provider, { identifier, code, expires })
  } catch (error) {
    ctx.config.logger.error('EmailSignInError', `Sending the sign-in code of provider "${provider.id}" failed; its code is deleted.`, describeError(redactError(error, [code, identifier])))
    await stored.discard().catch(() => ctx.config.logger.warn('EmailSignInError', 'The rows of an unsent sign-in code could not be deleted; they expire unused.'))
    throw new EmailSignInError(`The sign-in code of provider "${provider.id}" could not be sent.`)
  }
  const binding = ctx.cookieSet.cookies.emailLink
  const csrf = issueCsrf(ctx)
  return {
    html: codePage(ctx, provider, { email: identifier, callbackUrl: input.callbackUrl, csrfToken: csrf.token }),
    // For JSON clients (`X-Auth-Return-Redirect`, `signIn(…, { redirect: false })`): the same page, at a URL.
    redirect: `${authUrl(ctx, `/callback/${encodeURIComponent(provider.id)}`)}?${new URLSearchParams({ email: identifier, callbackUrl: input.callbackUrl })}`,
    cookies: [...csrf.cookies, { name: binding.name, value: bindingCookie(stored.nonce), options: { ...binding.options, maxAge: provider.maxAge } }],
  }
}

/** The code page, for the start and for a wrong code. */
export function codePage(ctx: ActionContext, provider: EmailCodeProvider, fields: { email: string; callbackUrl: string; csrfToken: string; error?: string }): string {
  return renderEmailCodePage({
    ...fields,
    action: `${ctx.basePath}/callback/${encodeURIComponent(provider.id)}`,
    minutes: Math.max(1, Math.round(provider.maxAge / 60)),
    signInUrl: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: fields.callbackUrl }),
    theme: ctx.config.theme,
  })
}

async function sendCode(ctx: ActionContext, provider: EmailCodeProvider, mail: { identifier: string; code: string; expires: Date }): Promise<void> {
  const host = new URL(ctx.origin).host
  if (!provider.mail) return void (await provider.sendCode?.({ ...mail, host, theme: ctx.config.theme, request: ctx.req }))
  const message = renderCodeEmail({ code: mail.code, host, minutes: Math.max(1, Math.round(provider.maxAge / 60)), theme: ctx.config.theme })
  await sendEmail({ ...provider.mail, key: provider }, mail.identifier, message, mail.expires)
}


/**
 * GET /verify-email?token&email (the link of the sign-up mail) and its confirmation, POST
 * /verify-email: in the browser that signed up (its `emailLink` cookie binds the token) the GET
 * verifies the address and signs in; anywhere else it asks first ("Sign in as …?", a CSRF-checked
 * POST), so a mail scanner's GET burns nothing. POST /verify-email/resend `{ csrfToken, email }`:
 * a new link for an unverified password account, the same answer for every address.
 */
import { isBoundLink } from '../../../mail/token.js'
import type { AuthResponse } from '../../../http/respond.js'
import { renderEmailConfirmPage } from '../../../pages/email-confirm.js'
import { actionPath, assertCsrf, issueCsrf, resolveCallbackUrl, type Action, type ActionContext } from '../../../actions/context.js'
import { formRefusal, linkParams, loadAccounts, passwordProvider, shownAddress, signInUrl } from './shared.js'
import { homeUrl } from '../../../actions/home.js'

export const verifyEmailLink: Action = async (ctx) => {
  const provider = passwordProvider(ctx.config)
  const fields = ctx.method === 'POST' ? ctx.body : Object.fromEntries(ctx.query)
  const { token, email } = linkParams(fields, 'verification')
  const binding = ctx.cookieSet.cookies.emailLink
  if (ctx.method === 'POST') assertCsrf(ctx)
  else if (!isBoundLink(ctx.requestCookies[binding.name], token, ctx.config.secrets)) return confirmationPage(ctx, token, email)
  const { verifyEmail } = await loadAccounts()
  const response = await verifyEmail(ctx, provider, token, email)
  return { ...response, cookies: [...(response.cookies ?? []), { name: binding.name, value: '', options: { ...binding.options, maxAge: 0 } }] }
}

/**
 * "Sign in as …?", showing the link's address only when it is one (no text of the URL's choosing).
 * @throws VerificationError when the link's `email` is no address.
 */
function confirmationPage(ctx: ActionContext, token: string, email: string): AuthResponse {
  const shown = shownAddress(email, 'verification')
  const csrf = issueCsrf(ctx)
  const html = renderEmailConfirmPage({
    email: shown,
    action: actionPath(ctx, '/verify-email'),
    fields: { token, email, callbackUrl: ctx.query.get('callbackUrl') ?? '' },
    csrfToken: csrf.token,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, cookies: csrf.cookies }
}

export const resendVerificationLink: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  const { url: callbackUrl } = await resolveCallbackUrl(ctx)
  try {
    const { resendVerification } = await loadAccounts()
    return await resendVerification(ctx, provider, { email: ctx.body.email, callbackUrl })
  } catch (error) {
    if (formRefusal(error) === undefined) throw error
    // The sign-in page's resend form asked for a valid address: back there.
    const url = new URL(signInUrl(ctx))
    url.searchParams.set('error', 'CredentialsSignin')
    url.searchParams.set('code', 'email_not_verified')
    return { redirect: url.href }
  }
}

/**
 * GET /verify-email/code `?email&callbackUrl`: the page asking for the sign-up's code (it reads and
 * uses nothing). POST /verify-email/code `{ csrfToken, email, code, callbackUrl }`: CSRF-checked,
 * counted against the client and the address as a sign-in attempt (a right code clears it); one of
 * the code's five tries used; the right code, in the browser that signed up, verifies the address
 * and signs in as the link does. A wrong one shows the page again with the tries left; the fifth, an
 * expired, used or unknown code, or one typed in another browser or for another address, get
 * `Verification` (the error page).
 */
import { actionPath, assertCsrf, issueCsrf, resolveCallbackUrl, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { VerificationError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { checkCode, CODE_DIGITS, nonceOf, type CodeAdapter } from '../../../mail/code.js'
import { limitSignInAttempt } from '../../../security/rate-limit.js'
import { renderSignUpCodePage } from '../pages/verify-code.js'
import { SIGN_UP_CODE_SECONDS } from '../verify-code.js'
import { loadAccounts, passwordProvider, shownAddress } from './shared.js'

export const signUpCodePage: Action = async (ctx) => {
  passwordProvider(ctx.config)
  const email = shownAddress(ctx.query.get('email') ?? '', 'sign-up code')
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  const page = codePage(ctx, email, callbackUrl)
  return { ...page, cookies: [...cookies, ...(page.cookies ?? [])] }
}

export const signUpCodeAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  const email = shownAddress(stringValue(ctx.body.email) ?? '', 'sign-up code')
  const attempt = await limitSignInAttempt(ctx, { id: `${provider.id}-verify-code`, type: 'credentials' }, email)
  const { url: callbackUrl } = await resolveCallbackUrl(ctx)
  // Spaces and dashes a mail client or the user put in are no part of the code.
  const code = (stringValue(ctx.body.code) ?? '').replace(/[\s-]/g, '')
  if (!new RegExp(`^\\d{${CODE_DIGITS}}$`).test(code)) return { ...codePage(ctx, email, callbackUrl, `Enter the ${CODE_DIGITS} digits of the code.`), status: 400 }
  const binding = ctx.cookieSet.cookies.signUpCode
  const nonce = nonceOf(ctx.requestCookies[binding.name])
  if (!nonce) throw new VerificationError('No sign-up code was sent for this browser (a code works only where the sign-up was made).')
  const check = await checkCode(ctx.config.adapter as CodeAdapter, ctx.config.secrets, nonce, email, code, Date.now(), 'sign-up-code')
  if (check.outcome === 'wrong') return { ...codePage(ctx, email, callbackUrl, `That code is not right. ${check.triesLeft === 1 ? '1 try' : `${check.triesLeft} tries`} left.`), status: 400 }
  if (check.outcome === 'expired') throw new VerificationError('The sign-up code has expired: send a new one.')
  if (check.outcome !== 'right') throw new VerificationError('The sign-up code is unknown, already used, void after five wrong tries, for another address, or was sent for another browser.')
  await attempt.succeeded()
  const { signInVerified } = await loadAccounts()
  const response = await signInVerified(ctx, provider, email)
  const cleared = [binding, ctx.cookieSet.cookies.emailLink].map((cookie) => ({ name: cookie.name, value: '', options: { ...cookie.options, maxAge: 0 } }))
  return { ...response, cookies: [...(response.cookies ?? []), ...cleared] }
}

function codePage(ctx: ActionContext, email: string, callbackUrl: string, error?: string): AuthResponse {
  const csrf = issueCsrf(ctx)
  const html = renderSignUpCodePage({
    action: actionPath(ctx, '/verify-email/code'),
    resendAction: actionPath(ctx, '/verify-email/resend'),
    csrfToken: csrf.token,
    email,
    callbackUrl,
    minutes: SIGN_UP_CODE_SECONDS / 60,
    error,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, cookies: csrf.cookies }
}

/**
 * POST /callback/<id> of a sign-in code provider: the code typed on its page. CSRF-checked; counted
 * against the client and the address (the per-identifier rate limit, in a bucket of its own beside
 * the mails'); then one of the code's five tries is used (code.ts), and the right code in the
 * browser that asked signs in as an e-mail link does: the second factor of an enrolled user, the
 * `signIn` callback, the user stored or marked verified, the session.
 *
 * A wrong code shows the page again with the tries left; the fifth, an expired code, a used one, or
 * one typed in another browser than the one that asked get `Verification` (the error page, 403).
 * GET shows the page again and changes nothing; HEAD is answered empty by the router.
 */
import { assertCsrf, issueCsrf, resolveCallbackUrl, stringValue, type ActionContext } from '../../../actions/context.js'
import { EmailSignInError, VerificationError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { limitSignInAttempt } from '../../../security/rate-limit.js'
import type { OutgoingCookie } from '../../../session/cookies.js'
import { continueEmailSignIn } from '../../email/routes/callback.js'
import { checkCode, CODE_DIGITS, MAX_TRIES, nonceOf, type CodeCheck } from '../../../mail/code.js'
import type { EmailCodeProvider } from '../provider.js'
import { normalizedAddress } from '../../email/sign-in.js'
import { codePage, type EmailCodeAdapter } from './start.js'

/**
 * Signs in with the code of the posted form.
 * @throws VerificationError, MissingCSRFError, RateLimitedError, AccessDeniedError, AdapterError
 */
export async function emailCodeCallback(ctx: ActionContext, provider: EmailCodeProvider): Promise<AuthResponse> {
  if (ctx.method !== 'POST') return pageAgain(ctx, provider)
  assertCsrf(ctx)
  const email = addressOf(provider, ctx.body.email)
  // Spaces and dashes a mail client or the user put in are no part of the code.
  const code = (stringValue(ctx.body.code) ?? '').replace(/[\s-]/g, '')
  const binding = ctx.cookieSet.cookies.emailLink
  const nonce = nonceOf(ctx.requestCookies[binding.name])
  if (!nonce) throw new VerificationError('No sign-in code was asked for in this browser (a code works only where it was asked for).')
  // A bucket of its own beside the mails'; counted as credentials attempts are: a right code clears it.
  const attempt = await limitSignInAttempt(ctx, { id: `${provider.id}-code`, type: 'credentials' }, email)
  const { url: callbackUrl } = await resolveCallbackUrl(ctx)
  if (!new RegExp(`^\\d{${CODE_DIGITS}}$`).test(code)) return wrongCode(ctx, provider, email, callbackUrl, `Enter the ${CODE_DIGITS} digits of the code.`)

  const check = await checkCode(ctx.config.adapter as EmailCodeAdapter, ctx.config.secrets, nonce, email, code)
  if (check.outcome === 'wrong') return wrongCode(ctx, provider, email, callbackUrl, `That code is not right. ${check.triesLeft === 1 ? '1 try' : `${check.triesLeft} tries`} left.`)
  if (check.outcome !== 'right') throw refusal(check)
  await attempt.succeeded()
  const cleared: OutgoingCookie = { name: binding.name, value: '', options: { ...binding.options, maxAge: 0 } }
  // The e-mail wing finishes the sign-in (its link and this code prove the same: the mailbox).
  const response = await continueEmailSignIn(ctx, provider, email)
  return { ...response, cookies: [...(response.cookies ?? []), cleared] }
}

/**
 * GET: the code page again (the URL JSON clients are given, a reload), in the browser holding a
 * code's cookie. It shows the address only as the provider normalises it, and uses nothing.
 * @throws VerificationError in any other browser, or for no valid address.
 */
async function pageAgain(ctx: ActionContext, provider: EmailCodeProvider): Promise<AuthResponse> {
  if (!nonceOf(ctx.requestCookies[ctx.cookieSet.cookies.emailLink.name])) throw new VerificationError('No sign-in code was asked for in this browser.')
  const email = addressOf(provider, ctx.query.get('email'))
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  const csrf = issueCsrf(ctx)
  return { html: codePage(ctx, provider, { email, callbackUrl, csrfToken: csrf.token }), cookies: [...cookies, ...csrf.cookies] }
}

function addressOf(provider: EmailCodeProvider, email: unknown): string {
  try {
    return normalizedAddress(provider, email)
  } catch (error) {
    if (error instanceof EmailSignInError) throw new VerificationError('The sign-in code form has no valid e-mail address.')
    throw error
  }
}

function wrongCode(ctx: ActionContext, provider: EmailCodeProvider, email: string, callbackUrl: string, error: string): AuthResponse {
  const csrf = issueCsrf(ctx)
  return { status: 400, html: codePage(ctx, provider, { email, callbackUrl, csrfToken: csrf.token, error }), cookies: csrf.cookies }
}

function refusal(check: Exclude<CodeCheck, { outcome: 'right' | 'wrong' }>): VerificationError {
  if (check.outcome === 'expired') return new VerificationError('The sign-in code has expired.')
  if (check.outcome === 'void') return new VerificationError(`The sign-in code is void after ${MAX_TRIES} wrong tries.`)
  return new VerificationError('The sign-in code is unknown, already used, void after too many wrong tries, or was asked for in another browser.')
}

/**
 * GET /reset-password?token&email (the link of the reset mail): the page for the new password; the
 * token is neither used nor looked up. POST /reset-password `{ csrfToken, token, email, password }`:
 * the password checked against the policy (a refusal keeps the token), the token used once, every
 * session of the user ended, this browser signed in (src/features/password/accounts.ts).
 */
import type { AuthResponse } from '../../../http/respond.js'
import { renderResetPasswordPage } from '../pages/password.js'
import { actionPath, assertCsrf, issueCsrf, type Action, type ActionContext } from '../../../actions/context.js'
import { formRefusal, linkParams, loadAccounts, passwordProvider, shownAddress, signInUrl } from './shared.js'
import { homeUrl } from '../../../actions/home.js'
import { PasswordBusyError } from '../errors.js'
import { asBusy, busyMessage } from './busy.js'

export const resetPasswordPage: Action = async (ctx) => page(ctx, linkParams(Object.fromEntries(ctx.query), 'reset'), 200)

export const resetPasswordAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  const link = linkParams(ctx.body, 'reset')
  try {
    const { resetPassword } = await loadAccounts()
    return await resetPassword(ctx, provider, { ...link, password: ctx.body.password })
  } catch (error) {
    if (error instanceof PasswordBusyError) return asBusy(page(ctx, link, 503, busyMessage(error)), error)
    const refusal = formRefusal(error)
    if (refusal === undefined) throw error
    return page(ctx, link, 400, refusal)
  }
}

/**
 * The form for the new password, for the link's address normalised (the reset normalises it too).
 * @throws VerificationError when the link's `email` is no address: the page shows no other text.
 */
function page(ctx: ActionContext, link: { token: string; email: string }, status: number, error?: string): AuthResponse {
  const provider = passwordProvider(ctx.config)
  const email = shownAddress(link.email, 'reset')
  const csrf = issueCsrf(ctx)
  const html = renderResetPasswordPage({
    action: actionPath(ctx, '/reset-password'),
    csrfToken: csrf.token,
    token: link.token,
    email,
    error,
    minLength: provider.password.minLength,
    maxLength: provider.password.maxLength,
    signInUrl: signInUrl(ctx),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  // A reset page is for one person: its link not sent on as a referrer (no cache keeps it: respond.ts).
  return { status, html, cookies: csrf.cookies, headers: { 'Referrer-Policy': 'no-referrer' } }
}

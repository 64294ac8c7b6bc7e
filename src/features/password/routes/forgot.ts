/**
 * GET /forgot-password: the page. POST /forgot-password `{ csrfToken, email }`: CSRF-checked,
 * rate-limited per address and IP; a reset link for an address with an account, and the same
 * "check your e-mail" answer for every address.
 */
import { renderForgotPasswordPage } from '../pages/password.js'
import type { AuthResponse } from '../../../http/respond.js'
import { actionPath, assertCsrf, issueCsrf, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { formRefusal, loadAccounts, passwordProvider, signInUrl } from './shared.js'
import { homeUrl } from '../../../actions/home.js'

export const forgotPasswordPage: Action = async (ctx) => page(ctx, 200)

export const forgotPasswordAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  try {
    const { requestPasswordReset } = await loadAccounts()
    return await requestPasswordReset(ctx, provider, { email: ctx.body.email })
  } catch (error) {
    const refusal = formRefusal(error)
    if (refusal === undefined) throw error
    return page(ctx, 400, refusal)
  }
}

function page(ctx: ActionContext, status: number, error?: string): AuthResponse {
  passwordProvider(ctx.config)
  const csrf = issueCsrf(ctx)
  const html = renderForgotPasswordPage({
    action: actionPath(ctx, '/forgot-password'),
    csrfToken: csrf.token,
    error,
    email: stringValue(ctx.body.email),
    signInUrl: signInUrl(ctx),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}

/**
 * GET /reset-password?token&email (the link of the reset mail): the page for the new password; the
 * token is neither used nor looked up. POST /reset-password `{ csrfToken, token, email, password }`:
 * the password checked against the policy (a refusal keeps the token), the token used once, every
 * session of the user ended, this browser signed in (src/password/accounts.ts).
 */
import { VerificationError } from '../../errors.js'
import type { AuthResponse } from '../../http/respond.js'
import { renderResetPasswordPage } from '../../pages/index.js'
import { assertCsrf, issueCsrf, stringValue, type Action, type ActionContext } from '../context.js'
import { actionPath, formRefusal, loadAccounts, passwordProvider, signInUrl } from './shared.js'

// Longer values are no link Portcullis made.
const MAX_PARAM_LENGTH = 1024

export const resetPasswordPage: Action = async (ctx) => page(ctx, linkOf(Object.fromEntries(ctx.query)), 200)

export const resetPasswordAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  const link = linkOf(ctx.body)
  try {
    const { resetPassword } = await loadAccounts()
    return await resetPassword(ctx, provider, { ...link, password: ctx.body.password })
  } catch (error) {
    const refusal = formRefusal(error)
    if (refusal === undefined) throw error
    return page(ctx, link, 400, refusal)
  }
}

/** @throws VerificationError when the link has no token or address. */
function linkOf(fields: Record<string, unknown>): { token: string; email: string } {
  const token = stringValue(fields.token)
  const email = stringValue(fields.email)
  if (!token || !email || token.length > MAX_PARAM_LENGTH || email.length > MAX_PARAM_LENGTH) throw new VerificationError('The reset link has no token or no e-mail address.')
  return { token, email }
}

function page(ctx: ActionContext, link: { token: string; email: string }, status: number, error?: string): AuthResponse {
  const provider = passwordProvider(ctx.config)
  const csrf = issueCsrf(ctx)
  const html = renderResetPasswordPage({
    action: actionPath(ctx, '/reset-password'),
    csrfToken: csrf.token,
    ...link,
    error,
    minLength: provider.password.minLength,
    maxLength: provider.password.maxLength,
    signInUrl: signInUrl(ctx),
    theme: ctx.config.theme,
  })
  // A reset page is for one person: not kept by caches, nor its link sent on as a referrer.
  return { status, html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' } }
}

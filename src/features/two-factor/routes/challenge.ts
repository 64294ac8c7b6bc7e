/**
 * GET /two-factor: the second step of a sign-in (or a redirect to `pages.twoFactor`), for a browser
 * with a pending sign-in (features/two-factor/pending.ts); without one, back to the sign-in page. POST
 * /two-factor `{ csrfToken, code }`: the code (or a recovery code) checked for the pending user,
 * then the sign-in finishes the way its first factor would have, with `twoFactor` given to the
 * `signIn` callback.
 */
import { compositionOf } from '../../../composition/index.js'
import { TwoFactorError } from '../../../errors.js'
import type { AuthFailure, AuthResponse } from '../../../http/respond.js'
import { renderTwoFactorPage } from '../pages/two-factor.js'
import { clearPendingSignIn, openPendingSignIn, type PendingSignIn } from '../pending.js'
import type { SecondFactorProof } from '../../../types.js'
import { actionPath, assertCsrf, issueCsrf, pageUrl, type Action, type ActionContext } from '../../../actions/context.js'
import { failureResponse, isRequestError } from '../../../actions/failure.js'
import { homeUrl } from '../../../actions/home.js'
import { assertTwoFactor, codeRefusal, loadFactor } from './shared.js'

export const twoFactorPage: Action = async (ctx) => {
  assertTwoFactor(ctx.config)
  if (ctx.config.pages.twoFactor !== undefined) return { redirect: pageUrl(ctx, 'twoFactor', '/two-factor') }
  openPendingSignIn(ctx)
  return page(ctx, 200)
}

export const twoFactorAction: Action = async (ctx) => {
  assertTwoFactor(ctx.config)
  assertCsrf(ctx)
  const pending = openPendingSignIn(ctx)
  let method: SecondFactorProof['method']
  try {
    method = await (await loadFactor()).checkSecondFactor(ctx, pending.userId, ctx.body.code)
  } catch (error) {
    const refusal = codeRefusal(error)
    if (refusal === undefined) throw error
    // The app's own page shows the error itself, as `pages.signIn` does a refused sign-in's.
    if (ctx.config.pages.twoFactor !== undefined) {
      const failure: AuthFailure = { error: 'TwoFactor', code: 'invalid_code' }
      return { redirect: pageUrl(ctx, 'twoFactor', '/two-factor', failure), failure }
    }
    return page(ctx, 400, refusal)
  }
  // Where the sign-in goes afterwards was resolved when it started.
  let response: AuthResponse
  try {
    response = await finishPendingSignIn({ ...ctx, body: { callbackUrl: pending.callbackUrl } }, pending, { method })
  } catch (error) {
    // The code is spent: a refusal (the signIn callback's) or a failure ends the pending sign-in too.
    if (isRequestError(error)) throw error
    response = failureResponse(error, ctx)
  }
  return { ...response, cookies: [...clearPendingSignIn(ctx), ...(response.cookies ?? [])] }
}

/** Finishes the sign-in as its first factor would have: the sign-in method's own resume. */
async function finishPendingSignIn(ctx: ActionContext, pending: PendingSignIn, twoFactor: SecondFactorProof): Promise<AuthResponse> {
  const { resume } = pending
  const provider = ctx.config.providerById.get(resume.pid)
  const methods = provider && compositionOf(ctx.config).methods.get(provider.id)
  if (!provider || methods?.kind !== resume.kind || !methods.resume) {
    throw new TwoFactorError('pending_invalid', `The provider "${resume.pid}" of the pending sign-in is no longer configured for it. Sign in again.`)
  }
  return (await methods.resume())(ctx, provider as never, pending, twoFactor)
}

function page(ctx: ActionContext, status: number, error?: string): AuthResponse {
  const csrf = issueCsrf(ctx)
  const html = renderTwoFactorPage({
    action: actionPath(ctx, '/two-factor'),
    csrfToken: csrf.token,
    error,
    signInUrl: pageUrl(ctx, 'signIn', '/signin'),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}

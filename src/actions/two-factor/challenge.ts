/**
 * GET /two-factor: the second step of a sign-in (or a redirect to `pages.twoFactor`), for a browser
 * with a pending sign-in (two-factor/pending.ts); without one, back to the sign-in page. POST
 * /two-factor `{ csrfToken, code }`: the code (or a recovery code) checked for the pending user,
 * then the sign-in finishes the way its first factor would have, with `twoFactor` given to the
 * `signIn` callback.
 */
import { isPasswordProvider } from '../../config/password-provider.js'
import { TwoFactorError } from '../../errors.js'
import type { AuthFailure, AuthResponse } from '../../http/respond.js'
import { renderTwoFactorPage } from '../../pages/index.js'
import { clearPendingSignIn, openPendingSignIn, type PendingSignIn } from '../../two-factor/pending.js'
import type { SecondFactorProof } from '../../types.js'
import type { AccountAdapter } from '../callback/users.js'
import { completeCredentialsSignIn } from '../callback/credentials.js'
import { assertCsrf, issueCsrf, pageUrl, type Action, type ActionContext } from '../context.js'
import { failureResponse, isRequestError } from '../failure.js'
import { actionPath, loadAccounts } from '../password/shared.js'
import { assertTwoFactor, codeRefusal, loadFactor } from './shared.js'
import { homeUrl } from '../home.js'

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

/** Finishes the sign-in as its first factor would have. */
async function finishPendingSignIn(ctx: ActionContext, pending: PendingSignIn, twoFactor: SecondFactorProof): Promise<AuthResponse> {
  const { resume, userId } = pending
  const provider = ctx.config.providerById.get(resume.pid)
  const gone = (): never => {
    throw new TwoFactorError('pending_invalid', `The provider "${resume.pid}" of the pending sign-in is no longer configured for it. Sign in again.`)
  }
  switch (resume.kind) {
    case 'credentials':
      if (provider?.type !== 'credentials' || isPasswordProvider(provider)) return gone()
      return completeCredentialsSignIn(ctx, provider, resume.user, resume.fields, twoFactor)
    case 'password': {
      if (!provider || !isPasswordProvider(provider)) return gone()
      const user = await ctx.config.adapter!.getUser!(userId)
      if (!user) throw new TwoFactorError('pending_invalid', 'The user of the pending sign-in no longer exists.')
      return (await loadAccounts()).completePasswordSignIn(ctx, provider, user, resume.email, twoFactor)
    }
    case 'oauth': {
      if (provider?.type !== 'oauth' && provider?.type !== 'oidc') return gone()
      // The account must still land in the user who gave the second factor.
      const linked = await (ctx.config.adapter as AccountAdapter).getUserByAccount({ provider: resume.account.provider, providerAccountId: resume.account.providerAccountId })
      if (linked && linked.id !== userId) throw new TwoFactorError('pending_invalid', 'The account of the pending sign-in now belongs to another user.')
      const { completeProviderSignIn } = await import('../callback/provider-sign-in.js')
      return completeProviderSignIn(ctx, { provider, user: resume.user, account: resume.account, profile: resume.profile }, twoFactor)
    }
    case 'email': {
      if (provider?.type !== 'email') return gone()
      const { continueEmailSignIn } = await import('../callback/email.js')
      return continueEmailSignIn(ctx, provider, resume.email, twoFactor)
    }
    case 'passkey': {
      if (provider?.type !== 'webauthn') return gone()
      const { resumePasskeySignIn } = await import('../callback/passkey.js')
      return resumePasskeySignIn(ctx, provider, userId, resume.providerAccountId, twoFactor)
    }
  }
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

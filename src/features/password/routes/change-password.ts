/**
 * GET /change-password: the signed-in user's form for a new password (the current one and the new
 * one; a user without a password is offered the mailed link instead); signed-out visitors go to sign
 * in. POST /change-password `{ csrfToken, currentPassword, password }`: CSRF-checked, the current
 * password checked and rate-limited as a sign-in, the new one against the policy, the user's other
 * sessions ended (accounts.ts `changePassword`, as the server-side `changePassword()`). With the
 * `account` option both ask a recent sign-in first, and send a stale session to confirm and back.
 */
import { actionPath, assertCsrf, authUrl, issueCsrf, pageUrl, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { recentSignInRefusal } from '../../../actions/sensitive.js'
import { compositionOf } from '../../../composition/index.js'
import type { AuthResponse } from '../../../http/respond.js'
import type { OutgoingCookie } from '../../../session/cookies.js'
import { ownerWithSessionId, sessionOwner, type SessionOwner } from '../../../session/devices.js'
import type { PasswordAdapter } from '../provider.js'
import { renderChangePasswordPage } from '../pages/password.js'
import { PasswordBusyError } from '../errors.js'
import { asBusy, busyMessage } from './busy.js'
import { formRefusal, loadAccounts, passwordProvider } from './shared.js'

export const changePasswordPage: Action = async (ctx) => {
  const asking = await signedInOwner(ctx, 'GET /change-password')
  if ('response' in asking) return asking.response
  const notice = ctx.query.get('changed') === '1' ? 'Your password was changed, and your other devices were signed out.' : undefined
  return page(ctx, asking.owner.userId, 200, { notice })
}

export const changePasswordAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await signedInOwner(ctx, 'POST /change-password')
  if ('response' in asking) return asking.response
  // The change refuses every older JWT without a session id: this one is given an id first (a new
  // cookie, sent with whatever the route answers), so that it stays as the other sessions end.
  const { owner, cookies } = await ownerWithSessionId(ctx, asking.owner)
  try {
    const { changePassword } = await loadAccounts()
    await changePassword(ctx, passwordProvider(ctx.config), owner, { currentPassword: ctx.body.currentPassword, newPassword: ctx.body.password })
  } catch (error) {
    if (error instanceof PasswordBusyError) return asBusy(await page(ctx, owner.userId, 503, { error: busyMessage(error) }, cookies), error)
    const refusal = formRefusal(error)
    if (refusal === undefined) throw error
    return page(ctx, owner.userId, 400, { error: refusal }, cookies)
  }
  return { redirect: authUrl(ctx, '/change-password?changed=1'), cookies }
}

/** The signed-in user, or the answer sending a visitor to sign in, or a stale session to confirm. */
async function signedInOwner(ctx: ActionContext, what: string): Promise<{ owner: SessionOwner } | { response: AuthResponse }> {
  const here = authUrl(ctx, '/change-password')
  const owner = await sessionOwner(ctx)
  if (!owner) return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: here }) } }
  const stale = await recentSignInRefusal(ctx, what, here)
  return stale ? { response: stale } : { owner }
}

async function page(ctx: ActionContext, userId: string, status: number, messages: { error?: string; notice?: string | undefined }, cookies: OutgoingCookie[] = []): Promise<AuthResponse> {
  const { password } = passwordProvider(ctx.config)
  const hasPassword = (await (ctx.config.adapter as PasswordAdapter).getUserPassword(userId)) !== null
  const csrf = issueCsrf(ctx)
  const accountOn = compositionOf(ctx.config).enabled.some((feature) => feature.name === 'account')
  const html = renderChangePasswordPage({
    action: actionPath(ctx, '/change-password'),
    csrfToken: csrf.token,
    hasPassword,
    forgotUrl: authUrl(ctx, '/forgot-password'),
    ...messages,
    minLength: password.minLength,
    maxLength: password.maxLength,
    ...(accountOn ? { accountUrl: authUrl(ctx, '/account') } : {}),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: [...cookies, ...csrf.cookies] }
}

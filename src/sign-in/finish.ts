/**
 * The last steps every sign-in method shares once its user is known: the `signIn` callback, the
 * features' `beforeSession` hooks (a banned user is refused there), then the new session, the features' `sessionStarted` hooks (an account in its deletion grace period is
 * restored there), the `signIn` event and the redirect (to `pages.newUser` for a user this sign-in
 * created).
 *
 * @see spec/auth-library-spec.md §4.3 (signIn callback), §6 (events)
 */
import { hooksOf } from '../composition/index.js'
import { AccessDeniedError } from '../errors.js'
import { emitEvent } from '../events.js'
import type { AuthResponse } from '../http/respond.js'
import type { Profile } from '../providers/oauth.js'
import { startSession } from '../session/strategy.js'
import type { Account, AdapterUser, CallbacksOptions, User } from '../types.js'
import { pageUrl, redirectTarget, resolveCallbackUrl, type ActionContext } from '../actions/context.js'

/**
 * Runs the `signIn` callback, if any.
 * @returns `undefined` to go on; the redirect to answer with when the callback returned a path.
 * @throws AccessDeniedError when it returned false.
 */
export async function askSignInCallback(ctx: ActionContext, params: Parameters<NonNullable<CallbacksOptions['signIn']>>[0]): Promise<AuthResponse | undefined> {
  const allowed = ctx.config.callbacks.signIn ? await ctx.config.callbacks.signIn(params) : true
  if (allowed === false) throw new AccessDeniedError()
  if (typeof allowed === 'string') return { redirect: await redirectTarget(ctx, allowed) }
  return undefined
}

/**
 * Starts the session of a sign-in whose user is resolved, emits `signIn`, and answers with the
 * session cookie and the redirect: the callback URL, or `pages.newUser` for a new user.
 */
export async function finishSignIn(
  ctx: ActionContext,
  signIn: { user: User | AdapterUser; account: Account; profile?: Profile; isNewUser: boolean },
): Promise<AuthResponse> {
  const { user, account, profile, isNewUser } = signIn
  // Before any session exists: a hook that throws refuses the sign-in (a banned user).
  for (const hook of hooksOf(ctx.config, 'beforeSession')) await hook(ctx, user, account)
  const sessionCookies = await startSession(ctx, user, account, { profile, isNewUser })
  const { url, cookies } = await resolveCallbackUrl(ctx)
  let redirect = isNewUser && ctx.config.pages.newUser ? pageUrl(ctx, 'newUser', '/signin', { callbackUrl: url }) : url
  // After the session is stored (a feature's step that races it, such as an account's deletion,
  // sees it), before anything is told: a hook that throws refuses the sign-in.
  for (const hook of hooksOf(ctx.config, 'sessionStarted')) redirect = (await hook(ctx, user, redirect)) ?? redirect
  await emitEvent(ctx.config, 'signIn', { user, account, profile, isNewUser })
  return { redirect, cookies: [...cookies, ...sessionCookies] }
}

/**
 * The end of a sign-in with an OAuth or OIDC provider, once the provider's answer is verified: the
 * `signIn` callback, the stored user and account (users.ts), a new session, the events, and the
 * redirect (to `pages.newUser` for a user this sign-in created).
 *
 * @see spec/auth-library-spec.md §4.3 (signIn callback), §5.6 (account linking), §6 (events)
 */
import { AccessDeniedError } from '../../errors.js'
import { emitEvent } from '../../events.js'
import type { AuthResponse } from '../../http/respond.js'
import type { OAuthProvider } from '../../config/oauth-provider.js'
import type { Profile } from '../../providers/oauth.js'
import { signedInUserId, startSession } from '../../session/strategy.js'
import type { Account, AdapterUser, User } from '../../types.js'
import { pageUrl, redirectTarget, resolveCallbackUrl, type ActionContext } from '../context.js'
import { resolveUser, type AccountAdapter } from './users.js'

/** A verified provider sign-in. */
export interface ProviderSignIn {
  provider: OAuthProvider
  /** What `profile()` returned; its `id` is the account's `providerAccountId`. */
  user: User & { id: string }
  account: Account
  profile: Profile
}

/**
 * Signs the user in and answers with the session cookie and the redirect.
 * @throws AccessDeniedError when the `signIn` callback refuses; OAuthAccountNotLinkedError; AdapterError
 */
export async function completeProviderSignIn(ctx: ActionContext, signIn: ProviderSignIn): Promise<AuthResponse> {
  const { provider, account, profile } = signIn
  // resolveConfig checked that an adapter used with OAuth providers has these methods.
  const adapter = ctx.config.adapter as AccountAdapter | undefined
  const linked = adapter ? await adapter.getUserByAccount({ provider: account.provider, providerAccountId: account.providerAccountId }) : null

  const allowed = ctx.config.callbacks.signIn ? await ctx.config.callbacks.signIn({ user: linked ?? signIn.user, account, profile }) : true
  if (allowed === false) throw new AccessDeniedError()
  if (typeof allowed === 'string') return { redirect: await redirectTarget(ctx, allowed) }

  let user: User | AdapterUser = signIn.user
  let isNewUser = false
  if (adapter) {
    const resolved = await resolveUser(ctx, adapter, {
      user: signIn.user,
      account,
      allowDangerousEmailAccountLinking: provider.allowDangerousEmailAccountLinking,
      linked,
      signedInUserId: await signedInUserId(ctx),
    })
    user = resolved.user
    isNewUser = resolved.isNewUser
  }
  const sessionAccount = adapter ? { ...account, userId: user.id } : account
  const { cookies: sessionCookies } = await startSession(ctx, user, sessionAccount, { profile, isNewUser })
  await emitEvent(ctx.config, 'signIn', { user, account: sessionAccount, profile, isNewUser })

  const { url, cookies } = await resolveCallbackUrl(ctx)
  const redirect = isNewUser && ctx.config.pages.newUser ? pageUrl(ctx, 'newUser', '/signin', { callbackUrl: url }) : url
  return { redirect, cookies: [...cookies, ...sessionCookies] }
}

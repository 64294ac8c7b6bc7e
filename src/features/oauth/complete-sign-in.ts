/**
 * The end of a sign-in with an OAuth or OIDC provider, once the provider's answer is verified: the
 * `signIn` callback, the stored user and account (users.ts), a new session, the events, and the
 * redirect (to `pages.newUser` for a user this sign-in created), with the steps every sign-in method
 * shares (src/sign-in/: `askSignInCallback`, `finishSignIn`, the stored user).
 *
 * @see spec/auth-library-spec.md §4.3 (signIn callback), §5.6 (account linking), §6 (events)
 */
import type { AuthResponse } from '../../http/respond.js'
import type { VerifiedSignIn } from './callback.js'
import { signInTokenChanges } from '../../session/provider-tokens.js'
import { signedInUserId } from '../../session/strategy.js'
import type { AdapterUser, SecondFactorProof, User } from '../../types.js'
import type { ActionContext } from '../../actions/context.js'
import { assertNotImpersonating } from '../../actions/sensitive.js'
import { askSignInCallback, finishSignIn } from '../../sign-in/finish.js'
import { resolveUser, userWithAddress, type AccountAdapter } from '../../sign-in/users.js'
import { addressProven, afterFirstFactor, asksFurtherFactor } from '../../sign-in/further-factor.js'

/**
 * Signs the user in and answers with the session cookie and the redirect.
 * @param kind The sign-in method's kind for the further factor (`twoFactor.requireForOAuth` asks `oauth`'s;
 *   the SSO wing's sign-ins are `sso`), and the kind of the pending sign-in that resumes it.
 * @throws AccessDeniedError when the `signIn` callback refuses; OAuthAccountNotLinkedError; AdapterError
 */
export async function completeProviderSignIn(ctx: ActionContext, signIn: VerifiedSignIn, twoFactor?: SecondFactorProof, kind = 'oauth'): Promise<AuthResponse> {
  const { provider, account, profile } = signIn
  // resolveConfig checked that an adapter used with OAuth providers has these methods.
  const adapter = ctx.config.adapter as AccountAdapter | undefined
  const linked = adapter ? await adapter.getUserByAccount({ provider: account.provider, providerAccountId: account.providerAccountId }) : null

  // The user a new account is about to be linked to by address, when the provider may do that
  // (allowDangerousEmailAccountLinking) and nobody is signed in: the provider proved the address,
  // so an account made without that proof loses what it was given (claim.ts).
  const signedInUser = adapter && !linked ? await signedInUserId(ctx) : null
  // Nor does an administrator's impersonation link one: it would be theirs, a way into the user's account.
  if (signedInUser) await assertNotImpersonating(ctx, `linking a ${provider.id} account`)
  const byAddress = adapter && !linked && !signedInUser && !twoFactor ? await emailLinkedUser(adapter, signIn) : null
  if (byAddress) await addressProven(ctx, byAddress, provider.id)

  // With `twoFactor.requireForOAuth`, the user this sign-in lands in gives a second factor first:
  // the account's user, or the one it is about to be linked to by address.
  const existing = linked ?? (asksFurtherFactor(ctx.config, kind) ? byAddress : null)
  if (existing && !twoFactor) {
    const pending = await afterFirstFactor(ctx, existing.id, { kind, pid: provider.id, user: signIn.user, account, profile })
    if (pending) return pending
  }

  const elsewhere = await askSignInCallback(ctx, { user: linked ?? signIn.user, account, profile, ...(twoFactor && { twoFactor }) })
  if (elsewhere) return elsewhere

  let user: User | AdapterUser = signIn.user
  let isNewUser = false
  if (adapter) {
    const resolved = await resolveUser(ctx, adapter, {
      user: signIn.user,
      account,
      allowDangerousEmailAccountLinking: provider.allowDangerousEmailAccountLinking,
      linked,
      signedInUserId: linked ? await signedInUserId(ctx) : signedInUser,
    })
    user = resolved.user
    isNewUser = resolved.isNewUser
    // A new sign-in of a linked account brings a new token set: store it, so that getAccessToken()
    // does not keep refreshing with a refresh token the provider may have revoked meanwhile.
    if (linked && adapter.updateAccount) await adapter.updateAccount({ provider: account.provider, providerAccountId: account.providerAccountId, ...signInTokenChanges(account) })
  }
  const sessionAccount = adapter ? { ...account, userId: user.id } : account
  return finishSignIn(ctx, { user, account: sessionAccount, profile, isNewUser })
}

/** The user a new account would be linked to by its address (`allowDangerousEmailAccountLinking`), or null. */
async function emailLinkedUser(adapter: AccountAdapter, signIn: VerifiedSignIn): Promise<AdapterUser | null> {
  return signIn.provider.allowDangerousEmailAccountLinking ? userWithAddress(adapter, signIn.user.email) : null
}

/** Finishes an OAuth or OIDC sign-in that waited for a further factor, once it is given. */
import type { ActionContext } from '../../actions/context.js'
import type { Resume } from '../../composition/index.js'
import { TwoFactorError } from '../../errors.js'
import type { AuthResponse } from '../../http/respond.js'
import type { Profile } from '../../providers/oauth.js'
import type { AccountAdapter } from '../../sign-in/users.js'
import type { Account, SecondFactorProof, User } from '../../types.js'
import { completeProviderSignIn } from './complete-sign-in.js'
import type { OAuthProvider } from './provider.js'

/** What an OAuth sign-in had in hand: the verified sign-in, with the provider's tokens. */
export interface OAuthResume extends Resume {
  readonly kind: 'oauth'
  readonly user: User & { id: string }
  readonly account: Account
  readonly profile: Profile
}

/** @throws TwoFactorError `pending_invalid` when the account now belongs to another user. */
export async function resumeOAuthSignIn(ctx: ActionContext, provider: OAuthProvider, pending: { userId: string; resume: Resume }, proof: SecondFactorProof): Promise<AuthResponse> {
  const resume = pending.resume as OAuthResume
  // The account must still land in the user who gave the second factor.
  const linked = await (ctx.config.adapter as AccountAdapter).getUserByAccount({ provider: resume.account.provider, providerAccountId: resume.account.providerAccountId })
  if (linked && linked.id !== pending.userId) throw new TwoFactorError('pending_invalid', 'The account of the pending sign-in now belongs to another user.')
  return completeProviderSignIn(ctx, { provider, user: resume.user, account: resume.account, profile: resume.profile }, proof)
}

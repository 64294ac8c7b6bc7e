/** Finishes an SSO sign-in that waited for a further factor, once it is given. */
import type { ActionContext } from '../../actions/context.js'
import type { Resume } from '../../composition/index.js'
import { TwoFactorError } from '../../errors.js'
import type { AuthResponse } from '../../http/respond.js'
import type { Profile } from '../../providers/oauth.js'
import type { AccountAdapter } from '../../sign-in/users.js'
import type { Account, SecondFactorProof, User } from '../../types.js'
import { completeProviderSignIn } from '../oauth/complete-sign-in.js'
import { ssoAdapter } from './adapter.js'
import { connectionIdOfAccount, SSO_KIND, ssoStandIn } from './complete.js'
import type { SsoProvider } from './config.js'

/** What an SSO sign-in had in hand when the further factor was asked. */
interface SsoResume extends Resume {
  readonly user: User & { id: string }
  readonly account: Account
  readonly profile: Profile
}

/** @throws TwoFactorError `pending_invalid` when the connection is gone or disabled, or the account now belongs to another user. */
export async function resumeSsoSignIn(ctx: ActionContext, sso: SsoProvider, pending: { userId: string; resume: Resume }, proof: SecondFactorProof): Promise<AuthResponse> {
  const resume = pending.resume as SsoResume
  const connection = await ssoAdapter(ctx.config).getSsoConnection(connectionIdOfAccount(resume.account.providerAccountId))
  if (!connection?.enabled) throw new TwoFactorError('pending_invalid', 'The SSO connection of the pending sign-in was removed or disabled meanwhile.')
  const linked = await (ctx.config.adapter as AccountAdapter).getUserByAccount({ provider: resume.account.provider, providerAccountId: resume.account.providerAccountId })
  if (linked && linked.id !== pending.userId) throw new TwoFactorError('pending_invalid', 'The account of the pending sign-in now belongs to another user.')
  return completeProviderSignIn(ctx, { provider: ssoStandIn(sso), user: resume.user, account: resume.account, profile: resume.profile }, proof, SSO_KIND)
}

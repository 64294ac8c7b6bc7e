/** Finishes a password sign-in that waited for a further factor, once it is given. */
import type { ActionContext } from '../../actions/context.js'
import type { Resume } from '../../composition/index.js'
import { TwoFactorError } from '../../errors.js'
import type { AuthResponse } from '../../http/respond.js'
import type { SecondFactorProof } from '../../types.js'
import { completePasswordSignIn } from './accounts.js'
import type { PasswordProvider } from './provider.js'

/** What a password sign-in had in hand: the stored user's address. */
export interface PasswordResume extends Resume {
  readonly kind: 'password'
  readonly email: string
}

/** @throws TwoFactorError `pending_invalid` when the user is gone. */
export async function resumePasswordSignIn(ctx: ActionContext, provider: PasswordProvider, pending: { userId: string; resume: Resume }, proof: SecondFactorProof): Promise<AuthResponse> {
  const user = await ctx.config.adapter!.getUser!(pending.userId)
  if (!user) throw new TwoFactorError('pending_invalid', 'The user of the pending sign-in no longer exists.')
  return completePasswordSignIn(ctx, provider, user, (pending.resume as PasswordResume).email, proof)
}

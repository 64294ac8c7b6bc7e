/** Finishes an e-mail link sign-in that waited for a further factor, once it is given. */
import type { ActionContext } from '../../actions/context.js'
import type { Resume } from '../../composition/index.js'
import type { AuthResponse } from '../../http/respond.js'
import type { EmailProvider } from '../../providers/email.js'
import type { SecondFactorProof } from '../../types.js'
import { continueEmailSignIn } from './routes/callback.js'

/** What an e-mail sign-in had in hand: the address of its link (already used). */
export interface EmailResume extends Resume {
  readonly kind: 'email'
  readonly email: string
}

export function resumeEmailSignIn(ctx: ActionContext, provider: EmailProvider, pending: { resume: Resume }, proof: SecondFactorProof): Promise<AuthResponse> {
  return continueEmailSignIn(ctx, provider, (pending.resume as EmailResume).email, proof)
}

/** Finishes a credentials sign-in that waited for a further factor, once it is given. */
import type { ActionContext } from '../../actions/context.js'
import type { Resume } from '../../composition/index.js'
import type { AuthResponse } from '../../http/respond.js'
import type { CredentialsProvider } from '../../providers/credentials.js'
import type { SecondFactorProof, User } from '../../types.js'
import { completeCredentialsSignIn } from './routes/callback.js'

/** What a credentials sign-in had in hand: the user `authorize` returned, and the submitted fields but its password fields. */
export interface CredentialsResume extends Resume {
  readonly kind: 'credentials'
  readonly user: User & { id: string }
  readonly fields: Record<string, unknown>
}

export function resumeCredentialsSignIn(ctx: ActionContext, provider: CredentialsProvider, pending: { resume: Resume }, proof: SecondFactorProof): Promise<AuthResponse> {
  const resume = pending.resume as CredentialsResume
  return completeCredentialsSignIn(ctx, provider, resume.user, resume.fields, proof)
}

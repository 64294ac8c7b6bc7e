/**
 * The points of a sign-in where the features take part, between the first factor and the session:
 * another factor asked of an enrolled user (the second factor's gate), and an address proven for
 * an account that never proved it (the password provider's claim). The core runs the enabled
 * features' hooks (Feature.hooks) here and knows none of them.
 */
import type { ActionContext } from '../actions/context.js'
import { hooksOf, type Resume } from '../composition/index.js'
import type { ResolvedConfig } from '../config/types.js'
import type { AuthResponse } from '../http/respond.js'
import type { AdapterUser } from '../types.js'

/**
 * After a first factor proved `userId`: the answer that asks for a further factor (the browser goes
 * to its page, the sign-in waits in a cookie), or undefined to start the session now.
 * @throws AdapterError
 */
export async function afterFirstFactor(ctx: ActionContext, userId: string, resume: Resume): Promise<AuthResponse | undefined> {
  for (const hook of hooksOf(ctx.config, 'afterFirstFactor')) {
    const answer = await hook(ctx, userId, resume)
    if (answer) return answer
  }
  return undefined
}

/** Whether a sign-in of `kind` would ask a further factor of a user who set one up. */
export function asksFurtherFactor(config: ResolvedConfig, kind: string): boolean {
  return hooksOf(config, 'asksFurtherFactor').some((hook) => hook(config, kind))
}

/** Whether `userId` set up a further factor. @throws AdapterError */
export async function hasFurtherFactor(ctx: Pick<ActionContext, 'config'>, userId: string): Promise<boolean> {
  for (const hook of hooksOf(ctx.config, 'hasFurtherFactor')) if (await hook(ctx, userId)) return true
  return false
}

/**
 * Checks a code of the further factor `userId` set up (a current code or a recovery code), as a
 * change as strong as turning it off asks (adding a passkey).
 * @throws TwoFactorError `invalid_code`; RateLimitedError; AdapterError
 */
export async function checkFurtherFactor(ctx: ActionContext, userId: string, code: string): Promise<void> {
  for (const hook of hooksOf(ctx.config, 'checkFurtherFactor')) await hook(ctx, userId, code)
}

/**
 * `provider` proved the address of `user`: the features take from an account that never proved it
 * what it was given without proof (claim.ts of the password provider).
 * @throws AdapterError
 */
export async function addressProven(ctx: ActionContext, user: AdapterUser, provider: string): Promise<void> {
  for (const hook of hooksOf(ctx.config, 'addressProven')) await hook(ctx, user, provider)
}

/**
 * Whether a user can still sign in without any of their account rows: what `unlinkAccount()` and
 * passkey removal ask before they take away what may be a user's last way in.
 */
import { hooksOf } from '../composition/index.js'
import type { Adapter, AdapterAccount } from '../types.js'
import type { ActionContext } from '../actions/context.js'

/**
 * A way in that is no account row would still let the user in: one a feature knows of
 * (`signsInWithoutAccount`: the password provider's password, e-mail sign-in's verified address:
 * one a provider reported without verifying may not be theirs to receive mail at). Neither can be
 * removed by another request, so the adapter's guard is not needed then.
 */
export async function canSignInWithoutAccount(ctx: Pick<ActionContext, 'config'>, adapter: Adapter, userId: string): Promise<boolean> {
  for (const hook of hooksOf(ctx.config, 'signsInWithoutAccount')) if (await hook(ctx, adapter, userId)) return true
  return false
}

/**
 * Whether the user keeps another account than `account` that can sign in: one at a provider that is
 * still configured. Pass `countedProviders` on to the adapter's `unlinkAccount(…, { unlessLastOf })`,
 * which asks the same atomically.
 */
export function keepsAnotherAccount(ctx: Pick<ActionContext, 'config'>, accounts: readonly AdapterAccount[], account: AdapterAccount): boolean {
  const counted = countedProviders(ctx)
  return accounts.some((other) => other !== account && counted.includes(other.provider))
}

/** The providers whose accounts count as a way in: the configured ones. */
export function countedProviders(ctx: Pick<ActionContext, 'config'>): string[] {
  return ctx.config.providers.map((provider) => provider.id)
}

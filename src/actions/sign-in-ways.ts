/**
 * Whether a user can still sign in without any of their account rows: what `unlinkAccount()` and
 * passkey removal ask before they take away what may be a user's last way in.
 */
import { isPasswordProvider } from '../config/password-provider.js'
import type { Adapter } from '../types.js'
import type { ActionContext } from './context.js'

/**
 * A way in that is no account row would still let the user in: their password (the password
 * provider is configured and they have one), or e-mail sign-in (an e-mail provider is configured and
 * their address is verified: one a provider reported without verifying may not be theirs to receive
 * mail at). Neither can be removed by another request, so the adapter's guard is not needed then.
 */
export async function canSignInWithoutAccount(ctx: Pick<ActionContext, 'config'>, adapter: Adapter, userId: string): Promise<boolean> {
  if (ctx.config.providers.some(isPasswordProvider) && typeof adapter.getUserPassword === 'function' && (await adapter.getUserPassword(userId)) !== null) return true
  if (!ctx.config.providers.some((provider) => provider.type === 'email')) return false
  const user = await adapter.getUser?.(userId)
  return typeof user?.email === 'string' && user.email.length > 0 && user.emailVerified != null
}

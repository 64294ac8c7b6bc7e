/**
 * An address proven by its owner for an account that never proved it: the account was made by a
 * password sign-up, which anyone can do with anyone's address. Unless the app requires a verified
 * address, whoever signed up was signed in at once, and could add passkeys, a second factor and
 * linked accounts. So when the owner proves the address another way (an e-mail link, an OAuth
 * provider that verified it and may link by address, a reset link), everything the account was
 * given before is taken away before the owner signs in: the password, the username, the passkeys,
 * the second factor, the linked accounts, every session. Stops a pre-account takeover: an attacker signs up
 * with the victim's address first and waits for the victim to sign in by link.
 *
 * An account without a password was made by the app or a proven sign-in, so it is left alone.
 */
import { isPasswordProvider, type PasswordAdapter } from './provider.js'
import type { AdapterUser } from '../../types.js'
import { revokeOwnSessions } from '../../session/devices.js'
import type { ActionContext } from '../../actions/context.js'

/**
 * Takes from `user`, whose address was never verified and is proven now by `provider`, the password
 * set without proof and everything a session could add since, and ends every session. Nothing
 * happens for a verified user, or one without a password, or without the Password provider.
 * @throws AdapterError
 */
export async function claimUnverifiedAccount(ctx: ActionContext, user: AdapterUser, provider: string): Promise<void> {
  // Without the Password provider no password signs in (and JWT sessions may have no store to end).
  if (user.emailVerified || !ctx.config.providers.some(isPasswordProvider)) return
  // The Password provider requires these methods at init (features/password/provider.ts).
  const adapter = ctx.config.adapter as PasswordAdapter
  if ((await adapter.getUserPassword(user.id)) === null) return
  await adapter.deleteUserPassword(user.id)
  // A name the sign-up chose, not the owner (`usernames`): freed; the owner chooses their own. Only
  // with usernames on: without them the adapter's table may not exist (its migration not run).
  const usernames = ctx.config.providers.find(isPasswordProvider)?.password.usernames !== undefined
  const username = usernames && adapter.deleteUsername ? await adapter.deleteUsername(user.id) : false
  const passkeys = adapter.listAuthenticatorsByUserId && adapter.deleteAuthenticator ? await adapter.listAuthenticatorsByUserId(user.id) : []
  for (const passkey of passkeys) await adapter.deleteAuthenticator!(passkey.credentialID)
  const secondFactor = adapter.deleteTwoFactor ? await adapter.deleteTwoFactor(user.id) : false
  const accounts = adapter.getAccountsByUserId && adapter.unlinkAccount ? await adapter.getAccountsByUserId(user.id) : []
  for (const { provider: id, providerAccountId } of accounts) await adapter.unlinkAccount!({ provider: id, providerAccountId })
  const sessions = await revokeOwnSessions(ctx, { userId: user.id, sessionId: undefined }, {}, 'addressClaimed', { everyToken: true })
  ctx.config.logger.warn(
    'UnverifiedAccountClaimed',
    `User ${user.id}'s address was proven by "${provider}" before it ever was by the password sign-up that made the account: ` +
      `its password, ${username ? 'its username' : 'no username'}, ${passkeys.length} passkey(s), ${secondFactor ? 'its second factor' : 'no second factor'}, ${accounts.length} linked account(s) and ${sessions.length} session(s) were removed; ` +
      'the owner sets a password with "Forgot your password?".',
  )
}

/**
 * The server-side `unlinkAccount(providerId)`: removes one of the signed-in user's provider accounts,
 * unless it is their last way to sign in. Linking is the sign-in itself: a signed-in user who signs
 * in with another provider gets that account linked (src/sign-in/users.ts).
 *
 * The ways to sign in counted are the user's linked accounts at providers still configured, e-mail
 * sign-in when an e-mail provider is configured and the user has a verified address, and a password
 * when the password provider is configured and the user has one (sign-in-ways.ts). An app's own
 * Credentials are not counted: whether the user has a password there is the app's knowledge, so an
 * app with both checks it before calling.
 */
import { AccountUnlinkError } from '../errors.js'
import type { OutgoingCookie } from '../session/cookies.js'
import { peekJwtToken, resealJwtToken } from '../session/jwt-strategy.js'
import { PROVIDER_TOKENS_CLAIM, tokensClaim } from '../session/provider-tokens.js'
import { signedInUserId } from '../session/strategy.js'
import type { Adapter, AdapterAccount } from '../types.js'
import type { ActionContext } from './context.js'
import { assertNotImpersonating } from './sensitive.js'
import { emitEvent } from '../events.js'
import { compositionOf } from '../composition/index.js'
import { canSignInWithoutAccount, countedProviders, keepsAnotherAccount } from '../sign-in/ways.js'

/** Options of `unlinkAccount()`. */
export interface UnlinkAccountOptions {
  /** Which account, when the user has several at the provider. */
  providerAccountId?: string | undefined
}

type UnlinkAdapter = Adapter & Required<Pick<Adapter, 'getAccountsByUserId' | 'unlinkAccount'>>

/**
 * Unlinks the signed-in user's account at `providerId` and returns it, with the cookies that take its
 * tokens out of a JWT session (so `getAccessToken()` stops calling the provider for it). A passkey's
 * account takes its credential along.
 * @throws AccountUnlinkError (see its `code`); AdapterError when the database fails.
 */
export async function unlinkAccount(ctx: ActionContext, providerId: string, options: UnlinkAccountOptions = {}): Promise<{ account: AdapterAccount; cookies: OutgoingCookie[] }> {
  const account = await unlinkStored(ctx, providerId, options)
  // What a feature keeps beside the account goes with it (a passkey's credential), whether or not
  // the config still turns that feature on.
  for (const feature of compositionOf(ctx.config).registered) await feature.hooks?.accountUnlinked?.(ctx.config, account)
  await emitEvent(ctx.config, 'accountUnlinked', { userId: account.userId, account })
  return { account, cookies: await dropProviderTokens(ctx, providerId) }
}

async function unlinkStored(ctx: ActionContext, providerId: string, options: UnlinkAccountOptions): Promise<AdapterAccount> {
  const adapter = ctx.config.adapter
  if (!adapter || typeof adapter.getAccountsByUserId !== 'function' || typeof adapter.unlinkAccount !== 'function') {
    throw new AccountUnlinkError('unsupported_adapter', 'unlinkAccount() needs an adapter with getAccountsByUserId and unlinkAccount (KnexAdapter has both).')
  }
  const userId = await signedInUserId(ctx)
  if (!userId) throw new AccountUnlinkError('not_signed_in', 'unlinkAccount(): nobody is signed in on this request.')
  await assertNotImpersonating(ctx, 'unlinkAccount()')

  const accounts = await (adapter as UnlinkAdapter).getAccountsByUserId(userId)
  // A feature's own record of the user (keepsAccount) is no way in of theirs to remove.
  const kept = (account: AdapterAccount) => compositionOf(ctx.config).enabled.some((feature) => feature.hooks?.keepsAccount?.(ctx.config, account) === true)
  const matching = accounts.filter((account) => account.provider === providerId && (options.providerAccountId === undefined || account.providerAccountId === options.providerAccountId) && !kept(account))
  if (matching.length === 0) throw new AccountUnlinkError('not_linked', `unlinkAccount(): the signed-in user has no "${providerId}" account${options.providerAccountId ? ` with id ${options.providerAccountId}` : ''}.`)
  if (matching.length > 1) {
    throw new AccountUnlinkError('ambiguous', `unlinkAccount(): the signed-in user has ${matching.length} "${providerId}" accounts; pass { providerAccountId } to say which.`)
  }
  const [account] = matching as [AdapterAccount]
  const ref = { provider: account.provider, providerAccountId: account.providerAccountId }

  const byEmail = await canSignInWithoutAccount(ctx, adapter, userId)
  const lastMessage = `unlinkAccount(): "${providerId}" is the user's last way to sign in; link another provider first.`
  if (!byEmail && !keepsAnotherAccount(ctx, accounts, account)) throw new AccountUnlinkError('last_sign_in_method', lastMessage)
  // Guarded in the adapter too: another request may be unlinking the other account right now.
  const removed = await (adapter as UnlinkAdapter).unlinkAccount(ref, byEmail ? undefined : { unlessLastOf: userId, countedProviders: countedProviders(ctx) })
  if (removed) return removed
  if (byEmail) throw new AccountUnlinkError('not_linked', `unlinkAccount(): the "${providerId}" account was removed by another request.`)
  throw new AccountUnlinkError('last_sign_in_method', lastMessage)
}

/** A JWT session re-sealed without the provider's `provider_tokens` entry; nothing when it has none. */
async function dropProviderTokens(ctx: ActionContext, providerId: string): Promise<OutgoingCookie[]> {
  if (ctx.config.session.strategy !== 'jwt') return []
  const token = await peekJwtToken(ctx)
  const claim = token ? tokensClaim(token) : undefined
  if (!token || !claim || !Object.hasOwn(claim, providerId)) return []
  const { [providerId]: _dropped, ...rest } = claim
  const next = { ...token }
  if (Object.keys(rest).length > 0) next[PROVIDER_TOKENS_CLAIM] = rest
  else delete next[PROVIDER_TOKENS_CLAIM]
  return resealJwtToken(ctx, next)
}

/**
 * What the passkey routes and the server-side `listPasskeys`/`removePasskey` share: the configured
 * passkey provider, the page's script, the user's passkeys as they are shown, and their removal,
 * refused when it would leave the user no way to sign in (as `unlinkAccount()` refuses it).
 */
import type { PasskeyAdapter, PasskeyProvider } from '../provider.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { AccountUnlinkError, UnknownActionError } from '../../../errors.js'
import { emitEvent } from '../../../events.js'
import { webauthnScriptDigest } from '../pages/webauthn-script.js'
import { type PageScript } from '../../../pages/theme.js'
import { signedInUserId } from '../../../session/strategy.js'
import type { Adapter, AdapterAccount } from '../../../types.js'
import type { AdapterAuthenticator, PasskeyInfo } from '../types.js'
import { authUrl, type ActionContext } from '../../../actions/context.js'
import { canSignInWithoutAccount, countedProviders, keepsAnotherAccount } from '../../../sign-in/ways.js'

/**
 * The passkey provider with this id, or the first one when no id is given.
 * @throws UnknownActionError when there is none (the passkey routes exist only with one).
 */
export function passkeyProvider(config: ResolvedConfig, providerId?: string): PasskeyProvider {
  const provider = config.providers.find((candidate): candidate is PasskeyProvider => candidate.type === 'webauthn' && (providerId === undefined || candidate.id === providerId))
  if (!provider) {
    throw new UnknownActionError(providerId === undefined ? 'No passkey provider is configured: add Passkey() from "portcullis/providers/passkey" to providers.' : `"${providerId}" is not a passkey provider.`)
  }
  return provider
}

/** The passkeys page, keeping the request's `callbackUrl` (query or form): where a confirmation comes back to. */
export function passkeysPageUrl(ctx: ActionContext): string {
  const callbackUrl = (typeof ctx.body.callbackUrl === 'string' ? ctx.body.callbackUrl : undefined) ?? ctx.query.get('callbackUrl') ?? undefined
  return authUrl(ctx, `/passkeys${callbackUrl ? `?${new URLSearchParams({ callbackUrl })}` : ''}`)
}

/** The passkey script as a page loads it: `<basePath>/webauthn.js?v=<hash>`, with its integrity value. */
export function pageScript(ctx: Pick<ActionContext, 'basePath'>): PageScript {
  const { version, integrity } = webauthnScriptDigest()
  return { src: `${ctx.basePath}/webauthn.js?v=${version}`, integrity }
}

/** A stored passkey as it is shown: no public key, no counter. */
export function passkeyInfo(authenticator: AdapterAuthenticator): PasskeyInfo {
  return {
    id: authenticator.credentialID,
    deviceType: authenticator.credentialDeviceType,
    backedUp: authenticator.credentialBackedUp,
    transports: authenticator.transports ? authenticator.transports.split(',').filter(Boolean) : [],
  }
}

/** The user's passkeys. */
export async function listUserPasskeys(config: ResolvedConfig, userId: string): Promise<PasskeyInfo[]> {
  const adapter = config.adapter as PasskeyAdapter
  return (await adapter.listAuthenticatorsByUserId(userId)).map(passkeyInfo)
}

type RemovalAdapter = PasskeyAdapter & Required<Pick<Adapter, 'deleteAuthenticator' | 'getAccountsByUserId' | 'unlinkAccount'>>

/**
 * Removes one of the signed-in user's passkeys (its credential and its `webauthn` account) and
 * returns it, unless it is their last way to sign in: the ways counted are their linked accounts
 * (each passkey is one), their password and e-mail sign-in (see unlink.ts), checked atomically by the adapter's
 * `unlinkAccount(…, { unlessLastOf })`, so two concurrent removals of a user's last two passkeys
 * remove one.
 *
 * @param what How errors name the call, e.g. `removePasskey()`.
 * @throws AccountUnlinkError `not_signed_in`, `not_linked` (no such passkey of this user), `last_sign_in_method`, `unsupported_adapter`
 */
export async function removeOwnPasskey(ctx: ActionContext, credentialId: string, what: string): Promise<PasskeyInfo> {
  const adapter = ctx.config.adapter as Partial<RemovalAdapter> | undefined
  if (!adapter || typeof adapter.deleteAuthenticator !== 'function' || typeof adapter.getAccountsByUserId !== 'function' || typeof adapter.unlinkAccount !== 'function') {
    throw new AccountUnlinkError('unsupported_adapter', `${what} needs an adapter with deleteAuthenticator, getAccountsByUserId and unlinkAccount (KnexAdapter has them).`)
  }
  const removal = adapter as RemovalAdapter
  const userId = await signedInUserId(ctx)
  if (!userId) throw new AccountUnlinkError('not_signed_in', `${what}: nobody is signed in on this request.`)
  // Any base64 spelling of the id (the browser's base64url too) finds the stored one.
  const authenticator = await removal.getAuthenticator(Buffer.from(credentialId, 'base64').toString('base64'))
  if (!authenticator || authenticator.userId !== userId) throw new AccountUnlinkError('not_linked', `${what}: the signed-in user has no passkey with this id.`)

  const accounts = await removal.getAccountsByUserId(userId)
  const account = accounts.find((candidate) => candidate.type === 'webauthn' && candidate.providerAccountId === authenticator.providerAccountId)
  if (account) {
    const byEmail = await canSignInWithoutAccount(ctx, removal, userId)
    const last = `${what}: this passkey is the user's last way to sign in; add another passkey or sign-in method first.`
    if (!byEmail && !keepsAnotherAccount(ctx, accounts, account)) throw new AccountUnlinkError('last_sign_in_method', last)
    const ref = { provider: account.provider, providerAccountId: account.providerAccountId }
    // Guarded in the adapter too: another request may be removing the user's other way right now.
    const unlinked = await removal.unlinkAccount(ref, byEmail ? undefined : { unlessLastOf: userId, countedProviders: countedProviders(ctx) })
    if (!unlinked) throw byEmail ? new AccountUnlinkError('not_linked', `${what}: the passkey was removed by another request.`) : new AccountUnlinkError('last_sign_in_method', last)
  }
  // A credential without its account could not sign in anyway; it goes too.
  return deleteCredential(ctx.config, removal, authenticator)
}

/**
 * The credential of a passkey's account that `unlinkAccount()` removed: without its account it signs
 * nobody in, and would still be listed. It goes as `removePasskey()` removes it.
 */
export async function removeUnlinkedCredential(config: ResolvedConfig, account: AdapterAccount): Promise<void> {
  const adapter = config.adapter as Partial<RemovalAdapter> | undefined
  if (typeof adapter?.getAuthenticator !== 'function' || typeof adapter.deleteAuthenticator !== 'function') return
  const authenticator = await adapter.getAuthenticator(account.providerAccountId)
  if (authenticator?.userId === account.userId) await deleteCredential(config, adapter as RemovalAdapter, authenticator)
}

async function deleteCredential(config: ResolvedConfig, adapter: RemovalAdapter, authenticator: AdapterAuthenticator): Promise<PasskeyInfo> {
  await adapter.deleteAuthenticator(authenticator.credentialID)
  const passkey = passkeyInfo(authenticator)
  await emitEvent(config, 'passkeyRemoved', { userId: authenticator.userId, passkey })
  return passkey
}

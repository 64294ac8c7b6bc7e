/**
 * POST /callback/:provider of a passkey provider, `{ csrfToken, action, data, callbackUrl? }` (what
 * the passkey script and Auth.js's client post): CSRF-checked like every POST, then
 *
 * - `authenticate` (default): this browser's challenge consumed, the response verified and the
 *   counter stored (src/features/passkey/verify.ts), the second page when the authenticator did not verify
 *   the user and the user has the second factor on, the `signIn` callback, a new session (JWT or
 *   database), the `signIn` event, and the redirect to the callback URL;
 * - `register`: for the signed-in user the challenge was issued to only, after a recent sign-in with
 *   the `account` option (else to confirm, and back to the passkeys page), and, when that user has the
 *   second factor on, after a current code or a recovery code (`code`); the response verified, the
 *   passkey stored with its `webauthn` account (`linkAccount` and `passkeyAdded` events), and back to
 *   the passkeys page (a failure too, with its code).
 *
 * Imported on the first passkey callback, with the verification code.
 */
import type { PasskeyAdapter, PasskeyProvider } from '../provider.js'
import { InvalidRequestError, RateLimitedError, TwoFactorError, UnknownActionError } from '../../../errors.js'
import { WebAuthnVerificationError } from '../errors.js'
import { emitEvent } from '../../../events.js'
import type { AuthResponse } from '../../../http/respond.js'
import { clearChallenge, useChallenge } from '../challenge.js'
import { signedInUserId } from '../../../session/strategy.js'
import type { Account, AdapterUser, SecondFactorProof } from '../../../types.js'
import { verifyPasskeyRegistration, verifyPasskeySignIn } from '../verify.js'
import { assertCsrf, authUrl, redirectTarget, stringValue, type ActionContext } from '../../../actions/context.js'
import { failureResponse } from '../../../actions/failure.js'
import { recentSignInRefusal } from '../../../actions/sensitive.js'
import { passkeyInfo, passkeysPageUrl } from './shared.js'
import type { Resume } from '../../../composition/index.js'
import { askSignInCallback, finishSignIn } from '../../../sign-in/finish.js'
import { afterFirstFactor, checkFurtherFactor, hasFurtherFactor } from '../../../sign-in/further-factor.js'

/** Answers the passkey callback. */
export async function passkeyCallback(ctx: ActionContext, provider: PasskeyProvider): Promise<AuthResponse> {
  if (ctx.method !== 'POST') throw new UnknownActionError(`The ${provider.id} callback takes a POST of the passkey response.`)
  assertCsrf(ctx)
  const action = ctx.body.action ?? 'authenticate'
  if (action === 'register') return registerPasskey(ctx, provider)
  if (action !== 'authenticate') throw new InvalidRequestError(`POST /callback/${provider.id}: action must be "authenticate" or "register".`)
  return signInWithPasskey(ctx, provider)
}

async function signInWithPasskey(ctx: ActionContext, provider: PasskeyProvider): Promise<AuthResponse> {
  const { challenge } = await useChallenge(ctx, provider, 'authenticate')
  // The challenge is spent: whatever follows, success or refusal, clears its cookie.
  let response: AuthResponse
  try {
    const { account, user, userVerified } = await verifyPasskeySignIn(ctx.config.adapter as PasskeyAdapter, provider, ctx.body.data, challenge)
    // A passkey is two factors only when the authenticator verified the user; without that
    // (`userVerification: 'preferred'`, a security key without a PIN) it is the device alone, and
    // an enrolled user gives the second factor as after a password.
    const pending = userVerified ? undefined : await afterFirstFactor(ctx, user.id, { kind: 'passkey', pid: provider.id, providerAccountId: account.providerAccountId })
    response = pending ?? (await completePasskeySignIn(ctx, provider, user, account.providerAccountId))
  } catch (error) {
    // The request itself was checked before the challenge was used: this is a refusal or a failure.
    response = failureResponse(error, ctx)
  }
  return { ...response, cookies: [...clearChallenge(ctx), ...(response.cookies ?? [])] }
}

/**
 * The end of a verified passkey sign-in: the `signIn` callback, the session, the `signIn` event
 * and the redirect.
 * @throws AccessDeniedError when the `signIn` callback refuses; AdapterError
 */
async function completePasskeySignIn(ctx: ActionContext, provider: PasskeyProvider, user: AdapterUser, providerAccountId: string, twoFactor?: SecondFactorProof): Promise<AuthResponse> {
  const sessionAccount: Account = { provider: provider.id, providerAccountId, type: 'webauthn', userId: user.id }
  const elsewhere = await askSignInCallback(ctx, { user, account: sessionAccount, ...(twoFactor && { twoFactor }) })
  return elsewhere ?? (await finishSignIn(ctx, { user, account: sessionAccount, isNewUser: false }))
}

/** What a passkey sign-in had in hand when its authenticator did not verify the user (its counter already stored). */
export interface PasskeyResume extends Resume {
  readonly kind: 'passkey'
  /** The passkey's account id, the credential id. */
  readonly providerAccountId: string
}

/**
 * Finishes, after the second factor, a passkey sign-in its authenticator did not verify the user
 * for. The assertion was verified and its counter stored before the second page, so the passkey is
 * not asked again; it must still be the user's: one removed meanwhile (a lost key) signs nobody in.
 * @throws TwoFactorError `pending_invalid` (the passkey or the user is gone); AccessDeniedError; AdapterError
 */
export async function resumePasskeySignIn(ctx: ActionContext, provider: PasskeyProvider, pending: { userId: string; resume: Resume }, twoFactor: SecondFactorProof): Promise<AuthResponse> {
  const { userId } = pending
  const { providerAccountId } = pending.resume as PasskeyResume
  const adapter = ctx.config.adapter as PasskeyAdapter
  const account = await adapter.getAccount(providerAccountId, provider.id)
  const authenticator = account?.userId === userId ? await adapter.getAuthenticator(providerAccountId) : null
  const user = authenticator?.userId === userId ? await adapter.getUser(userId) : null
  if (!user) throw new TwoFactorError('pending_invalid', 'The passkey of the pending sign-in was removed (or its user is gone) since the first step. Sign in again.')
  return completePasskeySignIn(ctx, provider, user, providerAccountId, twoFactor)
}

async function registerPasskey(ctx: ActionContext, provider: PasskeyProvider): Promise<AuthResponse> {
  const userId = await signedInUserId(ctx)
  if (!userId) throw new WebAuthnVerificationError('not_signed_in', 'A passkey registration arrived from a browser that is not signed in: registering a passkey needs a signed-in user.')
  const back = authUrl(ctx, '/passkeys')
  // With the `account` option, a recent sign-in first (the options request asked it too; this step stores).
  const stale = await recentSignInRefusal(ctx, `POST /callback/${provider.id} (register)`, passkeysPageUrl(ctx))
  if (stale) return { ...stale, cookies: clearChallenge(ctx) }
  try {
    const { challenge, userId: issuedTo } = await useChallenge(ctx, provider, 'register')
    if (issuedTo !== userId) throw new WebAuthnVerificationError('not_signed_in', 'The passkey registration challenge was issued to another user than the one signed in now.')
    await assertSecondFactorForRegistration(ctx, userId)
    const adapter = ctx.config.adapter as PasskeyAdapter
    const authenticator = await verifyPasskeyRegistration(adapter, provider, ctx.body.data, challenge, userId)
    await adapter.createAuthenticator(authenticator)
    const account = { userId, type: 'webauthn' as const, provider: provider.id, providerAccountId: authenticator.providerAccountId }
    await adapter.linkAccount(account)
    const user = (await adapter.getUser(userId)) ?? { id: userId }
    await emitEvent(ctx.config, 'linkAccount', { user, account })
    await emitEvent(ctx.config, 'passkeyAdded', { userId, passkey: passkeyInfo(authenticator) })
    const callbackUrl = stringValue(ctx.body.callbackUrl)
    return { redirect: callbackUrl === undefined ? back : await redirectTarget(ctx, callbackUrl), cookies: clearChallenge(ctx) }
  } catch (error) {
    if (!(error instanceof WebAuthnVerificationError || error instanceof TwoFactorError || error instanceof RateLimitedError)) throw error
    // Logged as any failure is; the user goes back to the passkeys page, which says it failed.
    const { failure, failureStatus } = failureResponse(error, ctx)
    const url = new URL(back)
    url.searchParams.set('error', error.clientCode)
    if (!(error instanceof RateLimitedError)) url.searchParams.set('code', error.code)
    return { redirect: url.href, failure, failureStatus, cookies: clearChallenge(ctx) }
  }
}

/**
 * A passkey signs in without asking for the second factor, so adding one is as strong a change as
 * turning the second factor off: for a user who has it on, the registration carries a current code
 * or a recovery code, checked as `disableTotp` checks its own (counted against the user, a code good
 * once). Checked here, on the POST that stores the passkey, rather than on the options request: only
 * this step can store a credential, so no sequence of requests stores one without the code, and the
 * code never travels in a GET's URL. A session left open on a shared computer cannot add a passkey
 * that outlives "sign out everywhere".
 *
 * @throws TwoFactorError `code_required`, `invalid_code`; RateLimitedError; AdapterError
 */
async function assertSecondFactorForRegistration(ctx: ActionContext, userId: string): Promise<void> {
  if (!(await hasFurtherFactor(ctx, userId))) return
  const code = stringValue(ctx.body.code)
  // Nothing to guess from an absent code: refused before the count, with its own code for the page.
  if (code === undefined || code.trim() === '') throw new TwoFactorError('code_required', 'Adding a passkey for a user with the second factor on needs a current code or a recovery code (the "code" field), and none was posted.')
  await checkFurtherFactor(ctx, userId, code)
}

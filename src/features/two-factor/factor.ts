/**
 * What the second factor does, for its routes and the server-side functions: enrol (a new secret,
 * its URI and QR code), confirm the enrolment with a first code (ten recovery codes issued), check a
 * code or a recovery code, disable, issue new recovery codes. Loaded on first use, with otpauth and
 * qrcode.
 *
 * Every code check is counted against the user (the rate limit's identifier window, a bucket of its
 * own) before the code is looked at, so parallel guesses cannot overtake the count; a good code clears
 * it. A TOTP code is good once: its time step must be later than the last accepted one, recorded
 * atomically by the adapter, so a replay (in the same 30 seconds or a concurrent request) is refused.
 */
import type { ActionContext } from '../../actions/context.js'
import { twoFactorOf, type TwoFactorAdapter } from './config.js'
import { TwoFactorError } from '../../errors.js'
import { emitEvent } from '../../events.js'
import { limitSignInAttempt } from '../../security/rate-limit.js'
import type { AdapterUser, SecondFactorProof } from '../../types.js'
import type { AdapterTwoFactor } from './types.js'
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeHash, recoveryCodeHashes, recoveryKeyOf } from './recovery.js'
import { matchingStep, newTotpSecret, openTotpSecret, qrCodeSvg, sealTotpSecret, sealedWithCurrentSecret, totpUri } from './totp.js'

/** The rate limit's bucket for second-factor codes (its identifier is the user id). */
const BUCKET = { id: 'two-factor', type: 'credentials' } as const

/** A started enrolment: what the user adds to their authenticator app. */
export interface TotpEnrollment {
  /** The secret, base32, for typing in by hand. */
  secret: string
  /** The `otpauth://totp/…` URI the QR code holds. */
  uri: string
  /** The QR code, an `<svg>` element. */
  qrCode: string
}

/** Which second factor was given. */
export type SecondFactorMethod = SecondFactorProof['method']

function adapterOf(ctx: Pick<ActionContext, 'config'>): TwoFactorAdapter {
  return ctx.config.adapter as TwoFactorAdapter
}

/** The user's enrolment, or null. */
export function enrolmentOf(ctx: Pick<ActionContext, 'config'>, userId: string): Promise<AdapterTwoFactor | null> {
  return adapterOf(ctx).getTwoFactor(userId)
}

/**
 * Starts (or, with `reuse`, shows again) the user's pending enrolment.
 * @param reuse Keep a pending secret the user may have scanned already (the setup page reloaded).
 * @throws TwoFactorError `already_enrolled`; AdapterError
 */
export async function startEnrolment(ctx: ActionContext, user: AdapterUser, options: { reuse: boolean }): Promise<TotpEnrollment> {
  const adapter = adapterOf(ctx)
  const existing = await adapter.getTwoFactor(user.id)
  if (existing?.enabledAt) throw alreadyEnrolled()
  let secret = options.reuse && existing ? openTotpSecret(ctx.config.secrets, existing.secret) : null
  if (!secret) {
    secret = newTotpSecret()
    if (!(await adapter.startTwoFactor(user.id, sealTotpSecret(ctx.config.secrets, secret)))) throw alreadyEnrolled()
  }
  const uri = totpUri(secret, issuerOf(ctx), user.email ?? user.name ?? user.id)
  return { secret, uri, qrCode: await qrCodeSvg(uri) }
}

/**
 * Confirms the pending enrolment with a first code.
 * @returns The ten recovery codes, to show once.
 * @throws TwoFactorError `invalid_code`, `not_enrolled` (nothing pending), `already_enrolled`; RateLimitedError; AdapterError
 */
export async function confirmEnrolment(ctx: ActionContext, userId: string, input: unknown): Promise<string[]> {
  const attempt = await limitSignInAttempt(ctx, BUCKET, userId)
  const adapter = adapterOf(ctx)
  const pending = await adapter.getTwoFactor(userId)
  if (!pending) throw new TwoFactorError('not_enrolled', 'No enrolment is pending: start one (the setup page, or enrollTotp()) before confirming it.')
  if (pending.enabledAt) throw alreadyEnrolled()
  const secret = openTotpSecret(ctx.config.secrets, pending.secret)
  const step = secret === null ? null : matchingStep(secret, codeOf(input), ctx.now * 1000)
  if (step === null) throw invalidCode()
  const codes = newRecoveryCodes()
  const hashes = recoveryCodeHashes(recoveryKeyOf(secret!), userId, codes)
  // Refused when another request confirmed or restarted it meanwhile.
  if (!(await adapter.enableTwoFactor(userId, { secret: pending.secret, step, enabledAt: new Date(ctx.now * 1000), recoveryCodes: hashes }))) throw alreadyEnrolled()
  await attempt.succeeded()
  await resealIfOlder(ctx, userId, pending.secret, secret!)
  await emitEvent(ctx.config, 'twoFactorEnabled', { userId })
  return codes
}

/**
 * Checks a code of the user's confirmed enrolment: six digits (TOTP), else a recovery code, which is
 * then used up.
 * @throws TwoFactorError `invalid_code` (wrong, replayed, used), `not_enrolled`; RateLimitedError; AdapterError
 */
export async function checkSecondFactor(ctx: ActionContext, userId: string, input: unknown): Promise<SecondFactorMethod> {
  return (await checkCode(ctx, userId, input)).method
}

/** `checkSecondFactor`, with the enrolment's TOTP key (null when no configured secret opens it). */
async function checkCode(ctx: ActionContext, userId: string, input: unknown): Promise<{ method: SecondFactorMethod; key: string | null }> {
  const attempt = await limitSignInAttempt(ctx, BUCKET, userId)
  const adapter = adapterOf(ctx)
  const enrolment = await adapter.getTwoFactor(userId)
  if (!enrolment?.enabledAt) throw new TwoFactorError('not_enrolled', 'The user has no confirmed TOTP enrolment.')
  const code = codeOf(input)
  const key = openTotpSecret(ctx.config.secrets, enrolment.secret)
  if (key === null) {
    ctx.config.logger.error(
      'TwoFactorSecretUnreadable',
      `The TOTP secret of user ${userId} opens with none of the configured secrets: the secret it was sealed with is no longer listed. List it again (docs/deployment.md, "Rotating the secret"), or reset the user's second factor with resetTwoFactor().`,
    )
  }
  let method: SecondFactorMethod | undefined
  if (/^\d{6}$/.test(code)) {
    const step = key === null ? null : matchingStep(key, code, ctx.now * 1000)
    // The step is recorded only if it is later than the last one: a code is good once.
    if (step !== null && (await adapter.useTwoFactorStep(userId, step))) method = 'totp'
  } else {
    const recovery = normalizeRecoveryCode(code)
    if (recovery !== undefined && (await useRecoveryCode(adapter, ctx.config.secrets, key, userId, recovery))) {
      method = 'recovery-code'
      await emitEvent(ctx.config, 'recoveryCodeUsed', { userId, remaining: Math.max(0, enrolment.recoveryCodes - 1) })
    }
  }
  if (!method) throw invalidCode()
  await attempt.succeeded()
  if (key !== null) await resealIfOlder(ctx, userId, enrolment.secret, key)
  return { method, key }
}

/**
 * Seals the TOTP key again with the current secret when `sealed` is another's: after its first good
 * code under a rotated secret, a key (and the recovery codes keyed from it) needs the older secret
 * no more. Compared with the stored value, so a key replaced meanwhile (a reset, a new enrolment) is
 * not overwritten.
 */
async function resealIfOlder(ctx: ActionContext, userId: string, sealed: string, key: string): Promise<void> {
  if (sealedWithCurrentSecret(ctx.config.secrets, sealed)) return
  const adapter = adapterOf(ctx)
  if (typeof adapter.resealTwoFactor !== 'function') {
    ctx.config.logger.warn(
      'TwoFactorSecretNotResealed',
      `The TOTP secret of user ${userId} is sealed with an older secret and the adapter has no resealTwoFactor() to seal it again: keep that secret listed, or add the method (KnexAdapter has it).`,
    )
    return
  }
  if (await adapter.resealTwoFactor(userId, { from: sealed, to: sealTotpSecret(ctx.config.secrets, key) })) {
    ctx.config.logger.debug('TwoFactorSecretResealed', `The TOTP secret of user ${userId} was sealed again with the current secret.`)
  }
}

/**
 * Removes the user's enrolment after a current code (or a recovery code).
 * @throws TwoFactorError `invalid_code`, `not_enrolled`; RateLimitedError; AdapterError
 */
export async function disableTwoFactor(ctx: ActionContext, userId: string, input: unknown): Promise<void> {
  await checkSecondFactor(ctx, userId, input)
  await adapterOf(ctx).deleteTwoFactor(userId)
  await emitEvent(ctx.config, 'twoFactorDisabled', { userId })
}

/**
 * Replaces the user's recovery codes after a current code (or a recovery code).
 * @returns The ten new codes, to show once.
 * @throws TwoFactorError `invalid_code`, `not_enrolled`; RateLimitedError; AdapterError
 */
export async function regenerateRecoveryCodes(ctx: ActionContext, userId: string, input: unknown): Promise<string[]> {
  const { key } = await checkCode(ctx, userId, input)
  const codes = newRecoveryCodes()
  // A key no secret opens let only a code of an older set in (keyed with a secret): the new set is keyed so too.
  await adapterOf(ctx).setRecoveryCodes(userId, recoveryCodeHashes(key === null ? ctx.config.secrets[0]! : recoveryKeyOf(key), userId, codes))
  await emitEvent(ctx.config, 'recoveryCodesRegenerated', { userId })
  return codes
}

/** Uses the recovery code: keyed from the TOTP key `key`, else (a set issued before that, recovery.ts) with whichever configured secret. */
async function useRecoveryCode(adapter: TwoFactorAdapter, secrets: readonly string[], key: string | null, userId: string, code: string): Promise<boolean> {
  const keys: Array<string | Buffer> = key === null ? [...secrets] : [recoveryKeyOf(key), ...secrets]
  for (const hashKey of keys) if (await adapter.useRecoveryCode(userId, recoveryCodeHash(hashKey, userId, code))) return true
  return false
}

/** The typed code without spaces; '' when it is no string (or absurdly long). */
function codeOf(input: unknown): string {
  return typeof input === 'string' && input.length <= 64 ? input.replace(/\s/g, '') : ''
}

/** The name authenticator apps show: the configured issuer, else the site's host. */
function issuerOf(ctx: ActionContext): string {
  return twoFactorOf(ctx.config)?.issuer ?? new URL(ctx.origin).hostname
}

function invalidCode(): TwoFactorError {
  return new TwoFactorError('invalid_code', 'The code is wrong, expired, or was used already.')
}

function alreadyEnrolled(): TwoFactorError {
  return new TwoFactorError('already_enrolled', 'The user already has a confirmed TOTP enrolment: disable it first to enrol again.')
}

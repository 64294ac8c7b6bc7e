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
import type { AdapterTwoFactor, AdapterUser, SecondFactorProof } from '../../types.js'
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeHash, recoveryCodeHashes } from './recovery.js'
import { matchingStep, newTotpSecret, openTotpSecret, qrCodeSvg, sealTotpSecret, totpUri } from './totp.js'

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
  const hashes = recoveryCodeHashes(ctx.config.secrets[0]!, userId, codes)
  // Refused when another request confirmed or restarted it meanwhile.
  if (!(await adapter.enableTwoFactor(userId, { secret: pending.secret, step, enabledAt: new Date(ctx.now * 1000), recoveryCodes: hashes }))) throw alreadyEnrolled()
  await attempt.succeeded()
  await emitEvent(ctx.config, 'twoFactorEnabled', { userId })
  return codes
}

/**
 * Checks a code of the user's confirmed enrolment: six digits (TOTP), else a recovery code, which is
 * then used up.
 * @throws TwoFactorError `invalid_code` (wrong, replayed, used), `not_enrolled`; RateLimitedError; AdapterError
 */
export async function checkSecondFactor(ctx: ActionContext, userId: string, input: unknown): Promise<SecondFactorMethod> {
  const attempt = await limitSignInAttempt(ctx, BUCKET, userId)
  const adapter = adapterOf(ctx)
  const enrolment = await adapter.getTwoFactor(userId)
  if (!enrolment?.enabledAt) throw new TwoFactorError('not_enrolled', 'The user has no confirmed TOTP enrolment.')
  const code = codeOf(input)
  let method: SecondFactorMethod | undefined
  if (/^\d{6}$/.test(code)) {
    const secret = openTotpSecret(ctx.config.secrets, enrolment.secret)
    if (secret === null) ctx.config.logger.error('TwoFactorSecretUnreadable', `The TOTP secret of user ${userId} opens with none of the configured secrets: keep the old secret in the list when rotating AUTH_SECRET.`)
    const step = secret === null ? null : matchingStep(secret, code, ctx.now * 1000)
    // The step is recorded only if it is later than the last one: a code is good once.
    if (step !== null && (await adapter.useTwoFactorStep(userId, step))) method = 'totp'
  } else {
    const recovery = normalizeRecoveryCode(code)
    if (recovery !== undefined && (await useRecoveryCode(adapter, ctx.config.secrets, userId, recovery))) {
      method = 'recovery-code'
      await emitEvent(ctx.config, 'recoveryCodeUsed', { userId, remaining: Math.max(0, enrolment.recoveryCodes - 1) })
    }
  }
  if (!method) throw invalidCode()
  await attempt.succeeded()
  return method
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
  await checkSecondFactor(ctx, userId, input)
  const codes = newRecoveryCodes()
  await adapterOf(ctx).setRecoveryCodes(userId, recoveryCodeHashes(ctx.config.secrets[0]!, userId, codes))
  await emitEvent(ctx.config, 'recoveryCodesRegenerated', { userId })
  return codes
}

/** Uses the recovery code under whichever configured secret hashed it. */
async function useRecoveryCode(adapter: TwoFactorAdapter, secrets: readonly string[], userId: string, code: string): Promise<boolean> {
  for (const secret of secrets) if (await adapter.useRecoveryCode(userId, recoveryCodeHash(secret, userId, code))) return true
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

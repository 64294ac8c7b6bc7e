/**
 * The second factor (`twoFactor` option): TOTP (RFC 6238) and recovery codes, asked between a
 * sign-in's first factor and its session, the setup page and the server-side functions. The gate
 * (pending.ts) is small; the TOTP code (otpauth, qrcode) loads on first use.
 */
import type { Feature } from '../../composition/index.js'
import { createDisableTotp, type DisableTotpFunction } from './api/disable-totp.js'
import { createEnrollTotp, type EnrollTotpFunction } from './api/enroll-totp.js'
import { createRegenerateRecoveryCodes, type RegenerateRecoveryCodesFunction } from './api/regenerate-recovery-codes.js'
import { createResetTwoFactor, type ResetTwoFactorFunction } from './api/reset-two-factor.js'
import { createVerifyTotp, type VerifyTotpFunction } from './api/verify-totp.js'
import { resolveTwoFactor, TWO_FACTOR_ADAPTER_METHODS } from './config.js'
import { asksSecondFactor, hasSecondFactor, secondFactorGate } from './pending.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface TwoFactorApi {
  /** Starts the signed-in user's TOTP enrolment: the secret, its URI and QR code (`twoFactor` option). */
  enrollTotp: EnrollTotpFunction
  /** Confirms the enrolment with a first code (the recovery codes), or checks a code (CSRF-checked). */
  verifyTotp: VerifyTotpFunction
  /** Turns the signed-in user's second factor off after a current code (CSRF-checked). */
  disableTotp: DisableTotpFunction
  /** Ten new recovery codes for the signed-in user after a current code (CSRF-checked). */
  regenerateRecoveryCodes: RegenerateRecoveryCodesFunction
  /** Removes a user's second factor without a code, for an administrator helping a locked-out user (no request, no CSRF check: the caller's route checks who may). */
  resetTwoFactor: ResetTwoFactorFunction
}

export const twoFactorFeature: Feature = {
  name: 'two-factor',
  resolve: (config, init) => resolveTwoFactor(config.twoFactor, init.adapter, init.rateLimit),
  routes: [
    { method: 'GET', path: '/two-factor', page: true, load: async () => (await import('./routes/challenge.js')).twoFactorPage },
    // It may store a pending secret: HEAD does not run it.
    { method: 'GET', path: '/two-factor/setup', load: async () => (await import('./routes/setup.js')).twoFactorSetupPage },
    { method: 'POST', path: '/two-factor', csrf: true, load: async () => (await import('./routes/challenge.js')).twoFactorAction },
    { method: 'POST', path: '/two-factor/setup', csrf: true, load: async () => (await import('./routes/setup.js')).twoFactorSetupAction },
    { method: 'POST', path: '/two-factor/recovery-codes', csrf: true, load: async () => (await import('./routes/setup.js')).recoveryCodesAction },
    { method: 'POST', path: '/two-factor/disable', csrf: true, load: async () => (await import('./routes/setup.js')).disableTwoFactorAction },
  ],
  off: 'The second factor is off: set the twoFactor option to use its routes.',
  hooks: {
    afterFirstFactor: secondFactorGate,
    asksFurtherFactor: asksSecondFactor,
    hasFurtherFactor: hasSecondFactor,
    checkFurtherFactor: async (ctx, userId, code) => {
      await (await import('./factor.js')).checkSecondFactor(ctx, userId, code)
    },
  },
  api: (api): TwoFactorApi => ({
    enrollTotp: createEnrollTotp(api),
    verifyTotp: createVerifyTotp(api),
    disableTotp: createDisableTotp(api),
    regenerateRecoveryCodes: createRegenerateRecoveryCodes(api),
    resetTwoFactor: createResetTwoFactor(api),
  }),
  adapterMethods: [...TWO_FACTOR_ADAPTER_METHODS, 'resealTwoFactor'],
  events: ['twoFactorEnabled', 'twoFactorDisabled', 'twoFactorReset', 'recoveryCodesRegenerated', 'recoveryCodeUsed'],
  errors: ['TwoFactor'],
  rateLimitBuckets: ['two-factor'],
  // The step between a sign-in's first factor and its second.
  cookies: { twoFactorPending: { name: 'authjs.two-factor', maxAge: 5 * 60 } },
}

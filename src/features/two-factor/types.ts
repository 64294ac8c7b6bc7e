/**
 * The second factor's public types, and what it adds to the shared ones: the adapter's enrolment
 * methods, its events, the app's own page for it and the `twoFactor` option (TypeScript declaration
 * merging, so the core's interfaces name no feature; `src/index.ts` re-exports this module).
 */
import type { Awaitable, CookieOption } from '../../types.js'

/**
 * A user's TOTP enrolment as the adapter stores it (`getTwoFactor`).
 * @see https://www.rfc-editor.org/rfc/rfc6238
 */
export interface AdapterTwoFactor {
  userId: string
  /** The shared secret, sealed by Portcullis with the secret (`AUTH_SECRET`): never stored in the clear. */
  secret: string
  /** When the first code confirmed the enrolment; `null` while it is pending. */
  enabledAt: Date | null
  /** The RFC 6238 time step of the last code accepted; `null` before the first. */
  lastUsedStep: number | null
  /** Recovery codes not used yet. */
  recoveryCodes: number
}

/**
 * The second factor (the `twoFactor` option): users who enrolled a TOTP authenticator app give a
 * code from it (or a recovery code) after their password, on a second page, before a session
 * starts. Enrolment is theirs to choose (`/two-factor/setup`, or `enrollTotp()`).
 */
export interface TwoFactorOptions {
  /** The name authenticator apps show beside the code. Default: the site's host name (from `AUTH_URL`, else the request). */
  issuer?: string | undefined
  /**
   * Ask enrolled users after an OAuth or OpenID Connect sign-in too. Default `false`: the provider's
   * own second factor is trusted.
   */
  requireForOAuth?: boolean | undefined
  /**
   * Ask enrolled users after following an e-mail sign-in link too. Default `true`: without it a
   * link would bypass the second factor of a password account.
   */
  requireForEmail?: boolean | undefined
}

declare module '../../types.js' {
  interface Adapter {
    /**
     * The user's TOTP enrolment (pending or confirmed) with the number of recovery codes left, or
     * `null`. Not in Auth.js's set: the second factor (`twoFactor` option) needs it and the methods
     * below; KnexAdapter keeps them in the seventh migration's tables.
     */
    getTwoFactor?(userId: string): Promise<AdapterTwoFactor | null>
    /**
     * Stores a pending enrolment (`enabledAt` and `lastUsedStep` null) with this sealed secret,
     * replacing a pending one. Never replaces a confirmed one: returns `false` then.
     */
    startTwoFactor?(userId: string, secret: string): Promise<boolean>
    /**
     * Confirms the pending enrolment whose secret is `secret`, in one transaction: `enabledAt` set,
     * `lastUsedStep` set to the first code's step, the recovery codes replaced by these hashes.
     * `false`, changing nothing, when there is no pending enrolment with that secret (confirmed
     * meanwhile, or replaced by a newer one).
     */
    enableTwoFactor?(userId: string, confirmation: { secret: string; step: number; enabledAt: Date; recoveryCodes: readonly string[] }): Promise<boolean>
    /**
     * Records that a code of time step `step` was accepted, atomically: `true` only when the
     * confirmed enrolment's `lastUsedStep` was below `step` (so a code is good once, even for two
     * concurrent requests), `false` otherwise.
     */
    useTwoFactorStep?(userId: string, step: number): Promise<boolean>
    /** Deletes one of the user's recovery codes by its hash: `true` when it was there (single use, atomic). */
    useRecoveryCode?(userId: string, codeHash: string): Promise<boolean>
    /** Replaces all the user's recovery codes by these hashes, in one transaction. */
    setRecoveryCodes?(userId: string, codeHashes: readonly string[]): Promise<void>
    /** Deletes the user's enrolment and recovery codes; `true` when there was an enrolment. */
    deleteTwoFactor?(userId: string): Promise<boolean>
    /**
     * Replaces the stored sealed secret `from` by `to` (the same TOTP key, sealed with the current
     * secret after a rotation), in one conditional UPDATE: `false`, changing nothing, when the stored
     * one is no longer `from` (reset, or enrolled again). Optional: without it a key stays sealed with
     * the secret it was enrolled under, and that secret must stay listed (a `TwoFactorSecretNotResealed`
     * warning says so).
     */
    resealTwoFactor?(userId: string, sealed: { from: string; to: string }): Promise<boolean>
  }

  interface CookiesOptions {
    /**
     * The sealed pending sign-in between the first factor and the second (`authjs.two-factor`): who
     * signs in and how, bound to this browser's CSRF cookie, valid 5 minutes. Not an Auth.js cookie.
     */
    twoFactorPending: CookieOption
  }

  interface EventsOptions {
    /** The user confirmed a TOTP enrolment with a first code; ten recovery codes were issued. */
    twoFactorEnabled?: ((message: { userId: string }) => Awaitable<void>) | undefined
    /** The user's TOTP enrolment was removed (`disableTotp()` or the settings page, with a current code). */
    twoFactorDisabled?: ((message: { userId: string }) => Awaitable<void>) | undefined
    /** An administrator removed the user's second factor without a code (`resetTwoFactor()`). */
    twoFactorReset?: ((message: { userId: string }) => Awaitable<void>) | undefined
    /** New recovery codes replaced the user's old ones (`regenerateRecoveryCodes()` or the settings page). */
    recoveryCodesRegenerated?: ((message: { userId: string }) => Awaitable<void>) | undefined
    /** A recovery code was used in place of a TOTP code; `remaining` are left. */
    recoveryCodeUsed?: ((message: { userId: string; remaining: number }) => Awaitable<void>) | undefined
  }

  interface PagesOptions {
    /**
     * The app's own second-factor page (`twoFactor` option), instead of the built-in `/two-factor`. It
     * posts `code` and `csrfToken` to `<basePath>/two-factor`.
     */
    twoFactor?: string | undefined
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * A second factor (TOTP, RFC 6238) for users who enrol one: asked after a password or credentials
     * sign-in, and by choice after OAuth and e-mail. Needs an adapter with the two-factor methods
     * (KnexAdapter's seventh migration) and the rate limit on. See `TwoFactorOptions`.
     */
    twoFactor?: TwoFactorOptions | boolean | undefined
  }
}

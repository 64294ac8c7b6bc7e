/**
 * The `twoFactor` option at init: its settings, and what it needs, each with an error saying what
 * to change. A second factor needs an adapter that stores enrolments and recovery codes, and the
 * rate limit: six digits can be guessed in a few hundred thousand tries, and only the per-user limit
 * keeps that out of reach.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { ResolvedRateLimit } from '../../security/rate-limit-config.js'
import type { Adapter } from '../../types.js'
import type { TwoFactorOptions } from './types.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'

/** The `twoFactor` option, resolved. */
export interface ResolvedTwoFactor {
  /** Undefined: the host of the request's origin. */
  readonly issuer: string | undefined
  readonly requireForOAuth: boolean
  readonly requireForEmail: boolean
}

/** The resolved `twoFactor` option of `config`; undefined when it is off. */
export function twoFactorOf(config: ResolvedConfig): ResolvedTwoFactor | undefined {
  return config.features['two-factor'] as ResolvedTwoFactor | undefined
}

/** The adapter methods the second factor calls. */
export const TWO_FACTOR_ADAPTER_METHODS = [
  'getUser',
  'getTwoFactor',
  'startTwoFactor',
  'enableTwoFactor',
  'useTwoFactorStep',
  'useRecoveryCode',
  'setRecoveryCodes',
  'deleteTwoFactor',
] as const

/** An adapter with the methods the second factor needs (checked at init). */
export type TwoFactorAdapter = Adapter & Required<Pick<Adapter, (typeof TWO_FACTOR_ADAPTER_METHODS)[number]>>

/**
 * Resolves `twoFactor`: undefined when it is off.
 * @throws InvalidConfigurationError when it cannot work.
 */
export function resolveTwoFactor(input: PortcullisConfig['twoFactor'], adapter: Adapter | undefined, rateLimit: ResolvedRateLimit | false): ResolvedTwoFactor | undefined {
  if (input === undefined || input === false) return undefined
  if (input !== true && (input === null || typeof input !== 'object')) {
    throw new InvalidConfigurationError('twoFactor must be true or an object { issuer?, requireForOAuth?, requireForEmail? }.')
  }
  const options: TwoFactorOptions = input === true ? {} : input
  if (!adapter) {
    throw new InvalidConfigurationError(
      'twoFactor stores each user\'s TOTP secret and recovery codes: it needs an adapter, e.g. adapter: KnexAdapter(knex) from "portcullis/adapters/knex" (run its migrations; the seventh creates the two-factor tables).',
    )
  }
  const missing = TWO_FACTOR_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`twoFactor: the adapter has no ${missing.join(', ')}. KnexAdapter has them all (after the portcullis_two_factor migration); another adapter must implement them.`)
  }
  if (!rateLimit || !rateLimit.identifier) {
    throw new InvalidConfigurationError(
      'twoFactor needs the per-account rate limit (rateLimit.identifier): without it a six-digit code can be guessed by trying them all. Remove `rateLimit: false` (or give rateLimit.identifier a window).',
    )
  }
  const issuer = options.issuer
  if (issuer !== undefined && (typeof issuer !== 'string' || !issuer.trim() || issuer.includes(':') || issuer.length > 64)) {
    throw new InvalidConfigurationError(`twoFactor.issuer must be a short name without ":" (authenticator apps show it beside the code), e.g. "Example"; got ${JSON.stringify(issuer)}.`)
  }
  for (const name of ['requireForOAuth', 'requireForEmail'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new InvalidConfigurationError(`twoFactor.${name} must be true or false.`)
  }
  return { issuer: issuer?.trim(), requireForOAuth: options.requireForOAuth ?? false, requireForEmail: options.requireForEmail ?? true }
}

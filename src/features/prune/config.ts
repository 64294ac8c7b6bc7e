/**
 * The `prune` option, resolved at init: what there is to prune, and how often.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { ResolvedRateLimit } from '../../security/rate-limit-config.js'
import type { ResolvedConfig } from '../../config/types.js'
import type { Adapter } from '../../types.js'
import type { PruneOptions } from './types.js'

/** The background prune as `startPruning` reads it. */
export interface ResolvedPrune {
  readonly everyMinutes: number
  readonly signal: AbortSignal | undefined
  /** The adapter's prune runs (KnexAdapter). */
  readonly adapter: boolean
  /** The Knex rate-limit table is pruned too. */
  readonly rateLimit: boolean
}

/** The resolved `prune` option of `config`; undefined when it is off. */
export function pruneOf(config: ResolvedConfig): ResolvedPrune | undefined {
  return config.features.prune as ResolvedPrune | undefined
}

/**
 * Resolves `config.prune`: `undefined` when it is not set.
 *
 * @throws InvalidConfigurationError when `everyMinutes` is not a positive number, `signal` not an
 *   AbortSignal, or there is nothing to prune (no adapter with `prune`, no Knex rate-limit store).
 */
export function resolvePrune(option: PruneOptions | undefined, adapter: Adapter | undefined, rateLimit: ResolvedRateLimit | false): ResolvedPrune | undefined {
  if (option === undefined) return undefined
  if (option === null || typeof option !== 'object') throw new InvalidConfigurationError('prune must be { everyMinutes }, e.g. { everyMinutes: 60 }.')
  const { everyMinutes, signal } = option
  // setTimeout's limit: about 24.8 days.
  if (typeof everyMinutes !== 'number' || !Number.isFinite(everyMinutes) || everyMinutes <= 0 || everyMinutes > 35_000) {
    throw new InvalidConfigurationError(`prune.everyMinutes must be a number of minutes above 0 (at most 35000), e.g. 60; got ${String(everyMinutes)}.`)
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidConfigurationError('prune.signal must be an AbortSignal (from an AbortController).')
  const resolved = { everyMinutes, signal, adapter: typeof adapter?.prune === 'function', rateLimit: rateLimit !== false && rateLimit.store.type === 'knex' }
  if (!resolved.adapter && !resolved.rateLimit) {
    throw new InvalidConfigurationError('prune has nothing to prune: it needs an adapter with prune() (KnexAdapter) or rateLimit.store { knex }.')
  }
  return resolved
}

/**
 * The features one Portcullis instance was composed of, found from its resolved config: the
 * registered ones in order, the ones the config turns on, and which feature serves each provider.
 * `resolveConfig` records them; the router, the server-side API and the shared sign-in steps ask
 * here, so that the core names no feature.
 */
import type { ResolvedConfig } from '../config/types.js'
import { UnknownActionError } from '../errors.js'
import type { Feature, FeatureHooks, ProviderMethods } from './feature.js'

export type * from './feature.js'

/** The features of one instance. */
export interface Composition {
  /** Every registered feature, in the registry's order. */
  readonly registered: readonly Feature[]
  /** The ones the config turns on. */
  readonly enabled: readonly Feature[]
  /** Provider id → the methods of the feature that serves it. */
  readonly methods: ReadonlyMap<string, ProviderMethods>
}

const EMPTY: Composition = Object.freeze({ registered: [], enabled: [], methods: new Map() })
const compositions = new WeakMap<ResolvedConfig, Composition>()

/** Records the features `config` was resolved with (resolveConfig, once). */
export function recordComposition(config: ResolvedConfig, composition: Composition): void {
  compositions.set(config, Object.freeze(composition))
}

/** The features of `config` (none for a config not made by resolveConfig, such as a unit test's). */
export function compositionOf(config: ResolvedConfig): Composition {
  return compositions.get(config) ?? EMPTY
}

/**
 * The methods of the feature serving `providerId`.
 * @throws UnknownActionError when no feature serves it (a config made by hand).
 */
export function providerMethods(config: ResolvedConfig, providerId: string): ProviderMethods {
  const methods = compositionOf(config).methods.get(providerId)
  if (!methods) throw new UnknownActionError(`No feature serves the provider "${providerId}".`)
  return methods
}

/** The enabled features' implementations of one hook, in order. */
export function hooksOf<K extends keyof FeatureHooks>(config: ResolvedConfig, hook: K): NonNullable<FeatureHooks[K]>[] {
  const found: NonNullable<FeatureHooks[K]>[] = []
  for (const feature of compositionOf(config).enabled) {
    const implementation = feature.hooks?.[hook]
    if (implementation) found.push(implementation)
  }
  return found
}

/**
 * The `apiKeys` option at init: its settings and what it needs (an adapter with the API key
 * methods), each with an error saying what to change.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import type { Adapter } from '../../types.js'
import type { ApiKeyRateLimit, ApiKeysOptions } from './types.js'

/** The `apiKeys` option, resolved. */
export interface ResolvedApiKeys {
  readonly prefix: string
  /** Lower case; undefined: Bearer only. */
  readonly header: string | undefined
  readonly scopes: readonly string[] | undefined
  readonly defaultExpiresIn: number | undefined
  readonly maxExpiresIn: number | undefined
  readonly rateLimit: Readonly<ApiKeyRateLimit> | undefined
  readonly cacheMs: number
  readonly cacheSize: number
  readonly maxKeysPerOwner: number
}

/** The adapter methods API keys call. */
export const API_KEY_ADAPTER_METHODS = ['getUser', 'createApiKey', 'getApiKeyByHash', 'getApiKey', 'listApiKeys', 'revokeApiKey', 'expireApiKey', 'touchApiKey', 'useApiKeyQuota'] as const

/** An adapter with them (checked at init). */
export type ApiKeyAdapter = Adapter & Required<Pick<Adapter, (typeof API_KEY_ADAPTER_METHODS)[number]>>

/** The resolved `apiKeys` option of `config`; undefined when it is off. */
export function apiKeysOf(config: ResolvedConfig): ResolvedApiKeys | undefined {
  return config.features['api-keys'] as ResolvedApiKeys | undefined
}

// RFC 6749 §3.3 scope tokens.
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/
const PREFIX = /^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*_$/

/**
 * Resolves `apiKeys`: undefined when it is off.
 * @throws InvalidConfigurationError when it cannot work.
 */
// Long: one check per option, each with its own message, read top to bottom.
export function resolveApiKeys(input: PortcullisConfig['apiKeys'], adapter: Adapter | undefined): ResolvedApiKeys | undefined {
  if (input === undefined || input === false) return undefined
  if (input !== true && (input === null || typeof input !== 'object')) throw new InvalidConfigurationError('apiKeys must be true or an object { prefix?, header?, scopes?, rateLimit?, … }.')
  const options: ApiKeysOptions = input === true ? {} : input
  if (!adapter) {
    throw new InvalidConfigurationError('apiKeys stores each key\'s hash: it needs an adapter, e.g. adapter: KnexAdapter(knex) from "portcullis/adapters/knex" (run its migrations; the eighth creates the ApiKey table).')
  }
  const missing = API_KEY_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`apiKeys: the adapter has no ${missing.join(', ')}. KnexAdapter has them all (after the portcullis_api_keys migration); another adapter must implement them.`)
  const prefix = options.prefix ?? 'pc_live_'
  if (typeof prefix !== 'string' || prefix.length > 20 || !PREFIX.test(prefix)) {
    throw new InvalidConfigurationError(`apiKeys.prefix must be letters and digits in groups joined and ended by "_", at most 20 characters, e.g. "acme_live_"; got ${JSON.stringify(prefix)}.`)
  }
  const header = options.header === undefined ? 'x-api-key' : options.header
  if (header !== false && (typeof header !== 'string' || !/^[a-z0-9-]{1,64}$/i.test(header) || ['authorization', 'cookie', 'host'].includes(header.toLowerCase()))) {
    throw new InvalidConfigurationError(`apiKeys.header must be a header name such as "x-api-key" (not authorization, cookie or host), or false; got ${JSON.stringify(header)}.`)
  }
  const scopes = options.scopes
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)))) {
    throw new InvalidConfigurationError('apiKeys.scopes must be a list of scope names (printable ASCII without spaces, quotes or backslashes), e.g. ["reports:read", "reports:write"].')
  }
  return {
    prefix,
    header: header === false ? undefined : header.toLowerCase(),
    scopes: scopes ? [...scopes] : undefined,
    defaultExpiresIn: optionalSeconds('defaultExpiresIn', options.defaultExpiresIn),
    maxExpiresIn: optionalSeconds('maxExpiresIn', options.maxExpiresIn),
    rateLimit: options.rateLimit === false ? undefined : rateLimitOf(options.rateLimit ?? { max: 1000, windowSeconds: 60 }, 'apiKeys.rateLimit'),
    cacheMs: wholeNumber('cacheSeconds', options.cacheSeconds ?? 5, 0) * 1000,
    cacheSize: wholeNumber('cacheSize', options.cacheSize ?? 1000, 0),
    maxKeysPerOwner: wholeNumber('maxKeysPerOwner', options.maxKeysPerOwner ?? 100, 1),
  }
}

/** A rate limit, checked. @throws InvalidConfigurationError (or, from a call, the caller turns it into its own). */
export function rateLimitOf(value: unknown, name: string): ApiKeyRateLimit {
  const { max, windowSeconds } = (value ?? {}) as Partial<ApiKeyRateLimit>
  if (!Number.isSafeInteger(max) || max! < 1 || !Number.isSafeInteger(windowSeconds) || windowSeconds! < 1 || windowSeconds! > 86_400 * 31) {
    throw new InvalidConfigurationError(`${name} must be { max, windowSeconds }, whole numbers of at least 1 (a window of at most 31 days), e.g. { max: 1000, windowSeconds: 60 }.`)
  }
  return { max: max!, windowSeconds: windowSeconds! }
}

function optionalSeconds(name: string, value: unknown): number | undefined {
  return value === undefined ? undefined : wholeNumber(name, value, 1)
}

function wholeNumber(name: string, value: unknown, least: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < least) throw new InvalidConfigurationError(`apiKeys.${name} must be a whole number of at least ${least}; got ${String(value)}.`)
  return value as number
}

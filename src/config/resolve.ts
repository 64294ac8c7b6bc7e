/**
 * Resolves the caller's configuration once, at init, into a frozen object: defaults applied,
 * environment read, values validated with errors that say what to change, session keys derived.
 * Nothing here runs per request, and the caller's object is never modified.
 *
 * @see spec/auth-library-spec.md §2.1, §2.2, §5.2
 */
import { randomBytes } from 'node:crypto'
import { deepFreeze } from '../freeze.js'
import { assertSessionAdapter, guardAdapter } from './adapter.js'
import { recordComposition, type Feature, type OptionInit, type ProviderInit, type ProviderMethods } from '../composition/index.js'
import { InvalidConfigurationError, MissingSecretError, UntrustedHostError } from '../errors.js'
import { recordObservers } from '../events.js'
import { developmentSecret } from './dev-secret.js'
import { createLogger, type LoggerInstance } from '../logger.js'
import { requestLogFields } from '../http/log-fields.js'
import { defaultRedirect, parseOriginPattern, type OriginPattern } from '../security/redirect.js'
import { resolveRateLimit } from '../security/rate-limit-config.js'
import { COOKIE_CHUNK_SIZE, MAX_COOKIE_CHUNKS, resolveCookies } from '../session/cookies.js'
import { deriveKeyRing } from '../session/keys.js'
import { DEFAULT_ADAPTER_TIMEOUTS, resolveStoreTimeouts, type StoreTimeouts } from '../session/store/deadline.js'
import { resolveSessionStore, sharedStoreOf } from '../session/store/resolve.js'
import type { Adapter, CookiesOptions, PagesOptions, SessionUserOptions } from '../types.js'
import { resolveTelemetry } from './telemetry.js'
import type { ConfiguredProvider, CookieSet, CredentialReader, PortcullisConfig, ResolvedConfig, SessionUserField } from './types.js'
import { isProduction, redirectProxyAllowedOriginsFromEnv, redirectProxyUrlFromEnv, secretsFromEnv, trustHostFromEnv, urlFromEnv } from './env.js'

const THIRTY_DAYS = 30 * 24 * 60 * 60
const ONE_DAY = 24 * 60 * 60

/**
 * Resolves `config` against `env`, with the features Portcullis is composed of (src/features/index.ts):
 * each resolves and checks its providers and its own option.
 *
 * @throws MissingSecretError in production without a secret.
 * @throws InvalidConfigurationError / UntrustedHostError when an option cannot work.
 */
export function resolveConfig(config: PortcullisConfig, features: readonly Feature[], env: Readonly<Record<string, string | undefined>> = process.env): ResolvedConfig {
  if (config === null || typeof config !== 'object') throw new TypeError('Portcullis(config): config must be an object.')
  const logger = createLogger(config.logger, config.debug === true, requestLogFields)

  const redirectProxyUrl = config.redirectProxyUrl ?? redirectProxyUrlFromEnv(env)
  const url = urlFromEnv(env)
  const { providers, methods } = resolveProviders(config.providers, features, { env, production: isProduction(env), url, redirectProxyUrl })
  if (providers.length === 0) {
    // An API behind another app's sign-in (say a Next.js front end on Auth.js) only reads its sessions.
    logger.warn('SessionsOnly', 'providers is empty: this instance only reads sessions; nobody can sign in through it. Add a provider to offer sign-in.')
  }
  const secrets = resolveSecrets(config.secret, env, logger)
  const trustHost = config.trustHost ?? trustHostFromEnv(env)
  if (trustHost === false && !url) {
    throw new UntrustedHostError(
      'trustHost is false (or AUTH_TRUST_HOST=false), so the request Host is not trusted and AUTH_URL must give the site URL, e.g. AUTH_URL=https://example.com/api/auth.',
    )
  }
  const storeTimeouts = resolveStoreTimeouts(config.session?.storeTimeoutMs)
  const adapterTimeouts = config.session?.storeTimeoutMs === undefined ? DEFAULT_ADAPTER_TIMEOUTS : storeTimeouts
  const adapter = config.adapter === undefined ? undefined : guardAdapter(config.adapter, logger, adapterTimeouts)
  const session = resolveSession(config, adapter, logger, storeTimeouts)
  const basePath = resolveBasePath(config.basePath, url)
  const useSecureCookies = config.useSecureCookies
  const jwtMaxAge = config.jwt?.maxAge ?? session.maxAge
  assertSeconds('jwt.maxAge', jwtMaxAge)
  // 3 chunks (~12 KB) fit the 16 KB of request headers Node reads by default, with room to spare.
  const jwtCacheSize = config.jwt?.cacheSize ?? 1000
  if (!Number.isSafeInteger(jwtCacheSize) || jwtCacheSize < 0) {
    throw new InvalidConfigurationError(`jwt.cacheSize must be a whole number of tokens, 0 to turn the cache off; got ${String(jwtCacheSize)}.`)
  }
  const jwtMaxSize = config.jwt?.maxSize ?? 3 * COOKIE_CHUNK_SIZE
  if (!Number.isInteger(jwtMaxSize) || jwtMaxSize < 1 || jwtMaxSize > MAX_COOKIE_CHUNKS * COOKIE_CHUNK_SIZE) {
    throw new InvalidConfigurationError(
      `jwt.maxSize must be a whole number of bytes from 1 to ${MAX_COOKIE_CHUNKS * COOKIE_CHUNK_SIZE} (${MAX_COOKIE_CHUNKS} cookie chunks of ${COOKIE_CHUNK_SIZE}, the most read back); got ${String(jwtMaxSize)}.`,
    )
  }

  const rateLimit = resolveRateLimit(config.rateLimit)
  const { enabled, options } = enabledFeatures(config, features, providers, methods, { adapter, rateLimit, logger })

  const resolved = deepFreeze({
    providers,
    providerById: new Map(providers.map((provider) => [provider.id, provider])),
    secrets,
    session,
    sharedStore: session.strategy === 'jwt' ? sharedStoreOf(session.store, typeof config.rateLimit === 'object' ? config.rateLimit.store : undefined, logger, storeTimeouts) : undefined,
    adapter,
    jwt: { maxAge: jwtMaxAge, maxSize: jwtMaxSize, cacheSize: jwtCacheSize, encode: config.jwt?.encode, decode: config.jwt?.decode },
    callbacks: { ...config.callbacks, redirect: config.callbacks?.redirect ?? defaultRedirect },
    events: { ...config.events },
    logger,
    pages: resolvePages(config.pages),
    theme: { colorScheme: 'auto', ...config.theme },
    basePath: basePath.value,
    basePathExplicit: basePath.explicit,
    url,
    trustHost,
    production: isProduction(env),
    useSecureCookies,
    cookieSets: {
      secure: cookieSet(true, config.cookies, secrets, features),
      insecure: cookieSet(false, config.cookies, secrets, features),
    },
    redirectProxyUrl,
    redirectProxyAllowedOrigins: resolveAllowedOrigins(config.redirectProxy?.allowedOrigins ?? redirectProxyAllowedOriginsFromEnv(env)),
    rateLimit,
    features: options,
    telemetry: resolveTelemetry(config.telemetry),
    ...composedHooks(enabled),
  } satisfies ResolvedConfig)
  // Each enabled feature checks what it needs of the whole config, in the registry's order.
  for (const feature of features) if (enabled.includes(feature)) feature.check?.(resolved)
  recordComposition(resolved, { registered: features, enabled: features.filter((feature) => enabled.includes(feature)), methods })
  // Found once: every event asks for them (events.ts).
  recordObservers(resolved, enabled.flatMap((feature) => (feature.hooks?.event ? [feature.hooks.event] : [])))
  return resolved
}

/**
 * The enabled features' credential readers as one: undefined when none is on (the session read then
 * reads no header), the reader itself when one is, else the first that says the request carries its credential.
 */
function composeCredentials(enabled: readonly Feature[]): CredentialReader | undefined {
  const readers = enabled.flatMap((feature) => (feature.hooks?.readCredential ? [feature.hooks.readCredential] : []))
  if (readers.length === 0) return undefined
  if (readers.length === 1) return { carries: readers[0]!.carries, read: readers[0]!.read }
  const claiming = (config: ResolvedConfig, req: Parameters<CredentialReader['carries']>[1]) => readers.find((reader) => reader.carries(config, req))
  return {
    carries: (config, req) => claiming(config, req) !== undefined,
    read: (config, req) => claiming(config, req)!.read(config, req),
  }
}

/** What the core asks of the enabled features' hooks on its own paths (the session read, ending sessions), composed once. */
function composedHooks(enabled: readonly Feature[]): Pick<ResolvedConfig, 'credentials' | 'sessionUserFields' | 'sessionReadWith' | 'everySessionEnded'> {
  return {
    credentials: composeCredentials(enabled),
    sessionUserFields: sessionUserFields(enabled),
    sessionReadWith: sessionReadWith(enabled),
    everySessionEnded: Object.freeze(enabled.flatMap((feature) => (feature.hooks?.everySessionEnded ? [feature.hooks.everySessionEnded] : []))),
  }
}

/** The enabled features' session user fields, undefined when none is on (the session read then carries none). */
function sessionUserFields(enabled: readonly Feature[]): readonly SessionUserField[] | undefined {
  const fields = enabled.flatMap((feature) => (feature.hooks?.sessionUserField ? [feature.hooks.sessionUserField] : []))
  return fields.length > 0 ? fields : undefined
}

/** What the database session read asks of `getSessionAndUser` besides the user: built once, undefined when nothing. */
function sessionReadWith(enabled: readonly Feature[]): SessionUserOptions | undefined {
  const names = enabled.flatMap((feature) => (feature.hooks?.sessionUserField ? [feature.hooks.sessionUserField.name] : []))
  if (enabled.some((feature) => feature.impersonates === true)) names.push('impersonatedBy')
  return names.length > 0 ? Object.freeze({ with: Object.freeze(names) }) : undefined
}

/**
 * The features the config turns on: those that serve a configured provider, and those whose option
 * is set (or whose `enabled` says so); and each option as its feature resolved it.
 */
function enabledFeatures(
  config: PortcullisConfig,
  features: readonly Feature[],
  providers: readonly ConfiguredProvider[],
  methods: ReadonlyMap<string, ProviderMethods>,
  init: OptionInit,
): { enabled: Feature[]; options: Record<string, unknown> } {
  const enabled = features.filter((feature) => (feature.providers ? providers.some((provider) => methods.get(provider.id) === feature.providers) : false))
  const options: Record<string, unknown> = {}
  for (const feature of features) {
    if (feature.providers) continue
    const option = feature.resolve?.(config, init)
    if (option !== undefined) options[feature.name] = option
    if (feature.enabled ? feature.enabled(config) : option !== undefined) enabled.push(feature)
  }
  return { enabled, options }
}

/**
 * The configured providers, each resolved by the feature that claims it (the first in the registry's
 * order), and which feature's methods serve each.
 */
function resolveProviders(
  input: PortcullisConfig['providers'],
  features: readonly Feature[],
  init: Omit<ProviderInit, 'given' | 'resolved'>,
): { providers: ConfiguredProvider[]; methods: Map<string, ProviderMethods> } {
  // Forgotten providers fail at init, not with a 400 on the first sign-in; an explicit `[]` reads sessions only.
  if (input === undefined) throw new InvalidConfigurationError(`providers is missing: ${AT_LEAST_ONE_PROVIDER}`)
  if (!Array.isArray(input)) throw new TypeError('Portcullis(config): providers must be an array.')
  const given = input.map((entry, index) => {
    // A built-in provider may be given bare (`providers: [GitHub]`): call it with no overrides.
    const provider = typeof entry === 'function' ? entry() : entry
    if (!provider || typeof provider !== 'object') {
      throw new InvalidConfigurationError(`providers[${index}] is not a provider: expected an object such as Credentials({ authorize }) or GitHub; got ${provider === null ? 'null' : typeof provider}.`)
    }
    if (typeof provider.id !== 'string' || !provider.id) {
      throw new InvalidConfigurationError(`providers[${index}] has no id: give it a non-empty string id such as "credentials" or "github" (it names the provider in its URLs).`)
    }
    if (!/^[A-Za-z0-9_-]+$/.test(provider.id)) {
      throw new InvalidConfigurationError(`Provider id "${provider.id}" may only contain letters, digits, "-" and "_": it is part of URLs.`)
    }
    return provider
  })
  const served = given.map((provider) => {
    const feature = features.find((candidate) => candidate.providers?.claims(provider))
    if (!feature?.providers) {
      const types = [...new Set(features.flatMap((candidate) => candidate.providers?.types ?? []))].map((type) => JSON.stringify(type))
      const { type } = provider as { type?: unknown }
      throw new InvalidConfigurationError(`Provider "${provider.id}": type must be ${types.slice(0, -1).join(', ')} or ${types.at(-1)}; got ${JSON.stringify(type)}.`)
    }
    return feature.providers
  })
  // Those that share another's settings (the password provider, a Nodemailer server) come last.
  const providers: ConfiguredProvider[] = new Array(given.length)
  for (const late of [false, true]) {
    const resolved = providers.filter(Boolean)
    given.forEach((provider, index) => {
      const methods = served[index]!
      if ((methods.late === true) === late) providers[index] = methods.resolve(provider as never, { ...init, given, resolved })
    })
  }
  for (const methods of new Set(served)) {
    if (methods.single && served.filter((candidate) => candidate === methods).length > 1) throw new InvalidConfigurationError(methods.single)
  }
  const seen = new Set<string>()
  for (const { id } of providers) {
    if (seen.has(id)) throw new InvalidConfigurationError(`Two providers have the id "${id}": give one of them another id.`)
    seen.add(id)
  }
  return { providers, methods: new Map(providers.map((provider, index) => [provider.id, served[index]!])) }
}

function resolveSecrets(secret: PortcullisConfig['secret'], env: Readonly<Record<string, string | undefined>>, logger: LoggerInstance): string[] {
  const given = secret === undefined ? [] : Array.isArray(secret) ? [...secret] : [secret]
  if (given.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new InvalidConfigurationError('secret must be a non-empty string or a list of non-empty strings (newest first).')
  }
  const secrets = given.length > 0 ? given : secretsFromEnv(env)
  if (secrets.length > 0) return secrets
  if (isProduction(env)) throw new MissingSecretError()
  // Not a per-process secret: what is sealed with it outlives the process (dev-secret.ts).
  const dev = developmentSecret()
  logger.warn(
    'MissingSecret',
    `No AUTH_SECRET set: using the development secret ${dev.created ? 'made now in' : 'kept in'} ${dev.path} (git-ignored), so sign-ins and two-step verification survive restarts. Set AUTH_SECRET (\`openssl rand -base64 33\`) before deploying.`,
  )
  return [dev.secret]
}

function resolveSession(config: PortcullisConfig, adapter: Adapter | undefined, logger: LoggerInstance, storeTimeouts: StoreTimeouts): ResolvedConfig['session'] {
  const options = config.session ?? {}
  // Spec §2.2: an adapter makes `database` the default; an explicit `jwt` keeps JWT sessions.
  const strategy = options.strategy ?? (adapter ? 'database' : 'jwt')
  if (strategy !== 'jwt' && strategy !== 'database') {
    throw new InvalidConfigurationError(`session.strategy must be "jwt" or "database"; got "${String(strategy)}".`)
  }
  if (strategy === 'database') {
    if (!adapter) {
      throw new InvalidConfigurationError(
        'session.strategy "database" needs a database adapter: pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex", or use "jwt".',
      )
    }
    assertSessionAdapter(adapter)
  }
  const maxAge = options.maxAge ?? THIRTY_DAYS
  const updateAge = options.updateAge ?? ONE_DAY
  assertSeconds('session.maxAge', maxAge)
  assertSeconds('session.updateAge', updateAge)
  const generateSessionToken = options.generateSessionToken ?? defaultSessionToken
  if (typeof generateSessionToken !== 'function') throw new InvalidConfigurationError('session.generateSessionToken must be a function returning a string.')
  const revocationCacheSeconds = options.revocationCacheSeconds ?? 5
  const storeOutageSeconds = options.storeOutageSeconds ?? 300
  assertSeconds('session.revocationCacheSeconds', revocationCacheSeconds)
  assertSeconds('session.storeOutageSeconds', storeOutageSeconds)
  const store = resolveSessionStore(options.store, logger, storeTimeouts)
  if (store && strategy === 'database') {
    logger.warn('SessionStoreUnused', 'session.store is for JWT sessions: database sessions are listed and ended in the database, and their refresh lease is kept in the Account row. It is not used.')
  }
  return { strategy, maxAge, updateAge, generateSessionToken, store, revocationCacheMs: revocationCacheSeconds * 1000, storeOutageMs: storeOutageSeconds * 1000, storeTimeouts }
}

// 256 bits from the CSPRNG: a session token cannot be guessed, and hex fits any column and cookie.
function defaultSessionToken(): string {
  return randomBytes(32).toString('hex')
}

function resolveBasePath(basePath: string | undefined, url: URL | undefined): { value: string; explicit: boolean } {
  if (basePath !== undefined) {
    if (typeof basePath !== 'string' || !basePath.startsWith('/')) throw new InvalidConfigurationError(`basePath must start with "/"; got "${String(basePath)}".`)
    return { value: trimSlash(basePath), explicit: true }
  }
  if (url && url.pathname !== '/') return { value: trimSlash(url.pathname), explicit: true }
  return { value: '/api/auth', explicit: false }
}

function resolvePages(pages: PagesOptions | undefined): PagesOptions {
  const resolved: PagesOptions = { ...pages }
  for (const [key, path] of Object.entries(resolved)) {
    if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//'))) {
      throw new InvalidConfigurationError(`pages.${key} must be a path on this site such as "/login"; got "${String(path)}".`)
    }
  }
  return resolved
}

function cookieSet(secure: boolean, overrides: Partial<CookiesOptions> | undefined, secrets: readonly string[], features: readonly Feature[]): CookieSet {
  const cookies = resolveCookies(secure, overrides, features)
  return { secure, cookies, ring: deriveKeyRing(secrets, cookies.sessionToken.name) }
}

function assertSeconds(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidConfigurationError(`${name} must be a number of seconds (>= 0); got ${String(value)}.`)
  }
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') : path
}

function resolveAllowedOrigins(input: unknown): OriginPattern[] {
  if (input === undefined) return []
  if (!Array.isArray(input)) throw new TypeError('Portcullis(config): redirectProxy.allowedOrigins must be an array of origins.')
  return input.map((value) => {
    const pattern = typeof value === 'string' ? parseOriginPattern(value) : undefined
    if (!pattern) {
      throw new InvalidConfigurationError(`redirectProxy.allowedOrigins: "${String(value)}" is not an origin; write one like https://staging.example.com or https://*.preview.example (no path).`)
    }
    return Object.freeze(pattern)
  })
}

const AT_LEAST_ONE_PROVIDER = 'configure at least one provider, e.g. providers: [Credentials({ authorize })] or providers: [GitHub] (or providers: [] for an API that only reads sessions).'

/**
 * Brute-force limits on sign-in: what the credentials and e-mail sign-in actions call before they
 * check a password or send a link. This file is small and loads nothing; the limiter and
 * rate-limiter-flexible are imported on the first attempt, so reading sessions never loads them.
 *
 * What counts (the `rateLimit` option's `ip` and `identifier` windows):
 * - credentials: an attempt counts against the client address and its identifier when it is made,
 *   before the password is checked, so parallel guesses cannot overtake the count. If it signs in
 *   (`attempt.succeeded()`), its point goes back to the address (users behind one NAT are not
 *   limited by each other's successful sign-ins) and the identifier's count is cleared;
 * - e-mail: every sign-in request counts against the client address and the address it is sent to
 *   (no `succeeded()`).
 */
import type { NodeRequest } from '../http/request.js'
import type { ResolvedConfig } from '../config/types.js'
import type { RequestCounter, SignInAttempt, SignInLimiter } from './rate-limit-limiter.js'
import type { RateLimitWindow } from '../types.js'

export type { SignInAttempt } from './rate-limit-limiter.js'

const NOT_LIMITED: SignInAttempt = { succeeded: async () => {} }

// One limiter per Portcullis instance (its resolved config), built on first use.
const limiters = new WeakMap<ResolvedConfig, Promise<SignInLimiter>>()
let limiterModule: Promise<typeof import('./rate-limit-limiter.js')> | undefined

/**
 * Counts one sign-in attempt against the client's IP address and against `identifier`, and refuses
 * it when either has used up its window. Call it before checking the credentials or sending the
 * e-mail; after a successful credentials sign-in, call `succeeded()` on the result.
 *
 * @param ctx The request (its `req` gives the client address: Express's `req.ip`, which honours
 *   `trust proxy`, else the socket's address).
 * @param provider The provider signed in with; identifiers are counted per provider.
 * @param identifier The e-mail address or username tried (compared trimmed, in lower case), or
 *   undefined to count the attempt against the address only.
 * @returns The counted attempt.
 * @throws RateLimitedError (429, `Retry-After`) when a limit is reached.
 * @example
 * ```ts
 * const attempt = await limitSignInAttempt(ctx, provider, credentials.username)
 * const user = await provider.authorize(credentials, ctx.req) // throws CredentialsSignin on a wrong password
 * await attempt.succeeded()
 * ```
 */
export async function limitSignInAttempt(
  ctx: { readonly config: ResolvedConfig; readonly req: NodeRequest },
  provider: { id: string; type: string },
  identifier: string | undefined,
): Promise<SignInAttempt> {
  const limiter = limiterOf(ctx.config)
  if (!limiter) return NOT_LIMITED
  return (await limiter).attempt(ctx.req, provider, identifier)
}

/**
 * Counts one passkey challenge (GET /webauthn-options, which stores it) against the client's IP
 * address, in a window of its own the size of `rateLimit.ip`.
 *
 * @throws RateLimitedError (429, `Retry-After`) when the address has used up its window.
 */
export async function limitPasskeyChallenge(ctx: { readonly config: ResolvedConfig; readonly req: NodeRequest }): Promise<void> {
  const limiter = limiterOf(ctx.config)
  if (limiter) await (await limiter).challenge(ctx.req)
}

// One request counter per instance and bucket, built on first use.
const requestCounters = new WeakMap<ResolvedConfig, Map<string, Promise<RequestCounter>>>()

/**
 * Counts one request of `key` (an API key's id) in a window of `bucket`: a feature's own limit on
 * the `rateLimit` option's store (memory, SQL or Redis; memory when `rateLimit` is off), with the
 * sign-in limiter's outage policy. Loads the limiter on first use.
 *
 * @returns undefined when allowed, else the seconds until the window ends (`Retry-After`).
 * @example
 * ```ts
 * const retryAfter = await limitRequest(config, 'api-key', key.id, { attempts: 100, windowSeconds: 60 })
 * ```
 */
export async function limitRequest(config: ResolvedConfig, bucket: string, key: string, window: Readonly<RateLimitWindow>): Promise<number | undefined> {
  let byBucket = requestCounters.get(config)
  if (!byBucket) requestCounters.set(config, (byBucket = new Map()))
  let counter = byBucket.get(bucket)
  if (!counter) {
    counter = (limiterModule ??= import('./rate-limit-limiter.js')).then(({ createRequestCounter }) => createRequestCounter(config, bucket))
    byBucket.set(bucket, counter)
  }
  return (await counter).consume(key, window)
}

/** The instance's limiter, built (and rate-limiter-flexible imported) on first use; undefined when `rateLimit` is off. */
function limiterOf(config: ResolvedConfig): Promise<SignInLimiter> | undefined {
  const options = config.rateLimit
  if (!options) return undefined
  let limiter = limiters.get(config)
  if (!limiter) {
    limiter = (limiterModule ??= import('./rate-limit-limiter.js')).then(({ createSignInLimiter }) => createSignInLimiter(config, options))
    limiters.set(config, limiter)
  }
  return limiter
}

/**
 * The identifier of a credentials attempt: `rateLimit.credentialsIdentifier` when configured, else,
 * among the fields the provider's `credentials` declares (all fields when it declares none), `email`,
 * else `username`, else the first that is not of type `password`. A non-string value counts as
 * `String(value)`.
 *
 * @param config The resolved config.
 * @param provider The credentials provider.
 * @param credentials The submitted fields, without Portcullis's own (`csrfToken`, `callbackUrl`).
 * @example
 * credentialsIdentifier(config, provider, { username: 'ada', password: '…' }) // 'ada'
 */
export function credentialsIdentifier(
  config: ResolvedConfig,
  provider: { id: string; credentials?: Record<string, { type?: unknown }> },
  credentials: Record<string, unknown>,
): string | undefined {
  if (!config.rateLimit) return undefined
  const custom = config.rateLimit.credentialsIdentifier
  if (custom) return nonEmpty(custom(credentials, { id: provider.id }))
  // Only fields the provider declares (when it declares any): a field authorize never reads, such as
  // an extra `email=<random>` next to `username=admin`, must not choose the bucket.
  const declared = Object.entries(provider.credentials ?? {})
  const names = declared.length > 0 ? declared.filter(([, field]) => field?.type !== 'password').map(([name]) => name) : ['email', 'username']
  const ordered = [...names.filter((name) => name === 'email'), ...names.filter((name) => name === 'username'), ...names.filter((name) => name !== 'email' && name !== 'username')]
  for (const name of ordered) {
    const value = fieldValue(Object.hasOwn(credentials, name) ? credentials[name] : undefined)
    if (value !== undefined) return value
  }
  return undefined
}

/**
 * A submitted field as the identifier: a non-empty string, or what `String()` makes of another JSON
 * value (`["admin"]` is `admin`, as an authorize that coerces its input reads it).
 */
function fieldValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  return nonEmpty(typeof value === 'string' ? value : String(value))
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined
}

/**
 * The sign-in limiter of one Portcullis instance: counts attempts per client address and per
 * identifier with rate-limiter-flexible (fixed windows, atomic in every store), and keeps counting
 * in this process's memory while a shared store is down. Imported on the first sign-in attempt,
 * never on the session-read path.
 *
 * Outage policy: a store that fails or takes longer than `rateLimit.storeTimeoutMs` (default a
 * second) to answer does not decide the attempt. The attempt is counted in this process's memory instead, with the same limits, so the
 * limits keep holding per process: nobody is locked out, and an attacker gets at most the limit
 * once per process. The first failure is logged as an error (`RateLimitStoreError`); while the store
 * stays down it is tried again every 10 seconds, and its return is logged (`RateLimitStoreRecovered`).
 *
 * @see https://github.com/animir/node-rate-limiter-flexible/wiki/Overall-example#login-endpoint-protection
 */
import { createHmac } from 'node:crypto'
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { ResolvedConfig } from '../config/types.js'
import { RateLimitedError } from '../errors.js'
import { withDeadline } from '../session/store/deadline.js'
import { describeError } from '../events.js'
import type { NodeRequest } from '../http/request.js'
import type { LoggerInstance } from '../logger.js'
import type { RateLimitWindow } from '../types.js'
import type { ResolvedRateLimit } from './rate-limit-config.js'
import { clientAddress } from './rate-limit-ip.js'
import { sharedStore, type SharedStore } from './rate-limit-stores.js'

/** How long a shared store may take to answer before the attempt is counted in memory instead, by default (`rateLimit.storeTimeoutMs`). */
export const STORE_TIMEOUT_MS = 1000
/** While a store is down, how often it is tried again. */
export const STORE_RETRY_MS = 10_000

/** A counted attempt. */
export interface SignInAttempt {
  /**
   * The attempt signed the user in: it no longer counts against the client address (many users may
   * sign in from one office or mobile network), and the identifier's failed attempts are forgotten,
   * so its window counts failures since the last success. Credentials only: every e-mail sign-in
   * request counts. Never throws (a store failure is logged).
   */
  succeeded(): Promise<void>
}

/** The limiter of one Portcullis instance. */
export interface SignInLimiter {
  /**
   * Counts one attempt against the client address and the identifier.
   * @throws RateLimitedError when either has used up its window.
   */
  attempt(req: NodeRequest, provider: { id: string; type: string }, identifier: string | undefined): Promise<SignInAttempt>
  /**
   * Counts one passkey challenge against the client address, in a bucket of its own with the
   * address's window: the sign-in page asks for one on every visit (conditional UI), which must not
   * use up the address's sign-in attempts.
   * @throws RateLimitedError when the address has used up its window.
   */
  challenge(req: NodeRequest): Promise<void>
}

/** Builds the limiter for a config whose `rateLimit` is on. */
export function createSignInLimiter(config: ResolvedConfig, options: ResolvedRateLimit): SignInLimiter {
  const store = sharedStore(options.store)
  const health = store ? new StoreHealth(store.label, config.logger, options.storeTimeoutMs) : undefined
  const counter = (bucket: 'ip' | 'id' | 'challenge', window: Readonly<RateLimitWindow> | false) =>
    window ? new Counter(`${options.keyPrefix}:${bucket}`, window, store, health) : undefined
  const ipCounter = counter('ip', options.ip)
  const identifierCounter = counter('id', options.identifier)
  const challengeCounter = counter('challenge', options.ip)
  // Identifiers (e-mail addresses, usernames) are stored as keyed hashes: a dump of the store
  // does not list who tried to sign in, and any length fits the key column.
  const hashKey = createHmac('sha256', config.secrets[0]!).update('portcullis rate-limit identifier').digest()

  return {
    async attempt(req, provider, identifier) {
      const address = clientAddress(req, options.ipv6Subnet)
      if (ipCounter && address !== undefined) {
        const retryAfter = await ipCounter.consume(address)
        if (retryAfter !== undefined) {
          throw new RateLimitedError(retryAfter, 'ip', `Too many sign-in attempts from ${address} (limit: ${describeWindow(ipCounter.window)}); refused for ${retryAfter} s.`)
        }
      }
      // Refunds the address's point only: a success is never worth more than the attempt it was.
      const refundAddress = async () => {
        if (ipCounter && address !== undefined) await ipCounter.refund(address)
      }
      const normalized = identifier?.normalize('NFKC').trim().toLowerCase()
      if (!identifierCounter || !normalized) return { succeeded: refundAddress }
      const key = createHmac('sha256', hashKey).update(`${provider.id}\0${normalized}`).digest('hex')
      const retryAfter = await identifierCounter.consume(key)
      if (retryAfter !== undefined) {
        const what = provider.type === 'email' ? 'e-mail sign-in requests' : 'failed sign-in attempts'
        throw new RateLimitedError(
          retryAfter,
          'identifier',
          `Too many ${what} for one identifier of the "${provider.id}" provider (limit: ${describeWindow(identifierCounter.window)}), the last from ${address ?? 'an unknown address'}; refused for ${retryAfter} s.`,
        )
      }
      return { succeeded: async () => void (await Promise.all([refundAddress(), identifierCounter.forget(key)])) }
    },

    async challenge(req) {
      const address = clientAddress(req, options.ipv6Subnet)
      if (!challengeCounter || address === undefined) return
      const retryAfter = await challengeCounter.consume(address)
      if (retryAfter !== undefined) {
        throw new RateLimitedError(retryAfter, 'ip', `Too many passkey challenges requested from ${address} (limit: ${describeWindow(challengeCounter.window)}); refused for ${retryAfter} s.`)
      }
    },
  }
}

/**
 * Counts requests per key in windows of any size (a feature's own limit: an API key's requests per
 * minute), in the `rateLimit` store when it is shared (memory, SQL, Redis), in this process's memory
 * otherwise or while the store is down (the same outage policy as sign-in's). One counter per window
 * size, made on first use.
 */
export interface RequestCounter {
  /** Counts one request against `key` in `window`. @returns undefined when allowed, else the seconds until the window ends. */
  consume(key: string, window: Readonly<RateLimitWindow>): Promise<number | undefined>
}

/** Builds a request counter for `bucket` (its keys are `<keyPrefix>:<bucket>:<windowSeconds>:<attempts>:<key>`). */
export function createRequestCounter(config: ResolvedConfig, bucket: string): RequestCounter {
  const options = config.rateLimit || undefined
  const store = options ? sharedStore(options.store) : undefined
  const health = store ? new StoreHealth(store.label, config.logger, options!.storeTimeoutMs) : undefined
  const prefix = `${options?.keyPrefix ?? 'portcullis'}:${bucket}`
  const counters = new Map<string, Counter>()
  return {
    consume(key, window) {
      const name = `${window.windowSeconds}:${window.attempts}`
      let counter = counters.get(name)
      if (!counter) counters.set(name, (counter = new Counter(`${prefix}:${name}`, window, store, health)))
      return counter.consume(key)
    },
  }
}

function describeWindow(window: Readonly<RateLimitWindow>): string {
  return `${window.attempts} per ${window.windowSeconds} s`
}

/** One window (per address, or per identifier): in the shared store when there is one, else in memory. */
class Counter {
  readonly window: Readonly<RateLimitWindow>
  // Counts here when there is no shared store, and stands in for it while it is down.
  private readonly memory: RateLimiterMemory
  private storeLimiter: Promise<RateLimiterAbstract> | undefined

  constructor(
    private readonly keyPrefix: string,
    window: Readonly<RateLimitWindow>,
    private readonly store: SharedStore | undefined,
    private readonly health: StoreHealth | undefined,
  ) {
    this.window = window
    this.memory = new RateLimiterMemory({ keyPrefix, points: window.attempts, duration: window.windowSeconds })
  }

  /** Counts one attempt. @returns undefined when allowed, else the seconds until the window ends. */
  async consume(key: string): Promise<number | undefined> {
    try {
      await this.run((limiter) => limiter.consume(key))
      return undefined
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal
      return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000))
    }
  }

  /** Takes one attempt off the key's count. Never throws. */
  async refund(key: string): Promise<void> {
    await this.run((limiter) => limiter.reward(key, 1)).catch(() => {})
  }

  /** Clears the key's count. Never throws. */
  async forget(key: string): Promise<void> {
    await this.run((limiter) => limiter.delete(key)).catch(() => {})
  }

  private run<T>(operation: (limiter: RateLimiterAbstract) => Promise<T>): Promise<T> {
    if (!this.store || !this.health) return operation(this.memory)
    return this.health.run(async () => operation(await this.sharedLimiter()), () => operation(this.memory))
  }

  private sharedLimiter(): Promise<RateLimiterAbstract> {
    this.storeLimiter ??= this.store!.limiter(this.keyPrefix, this.window).catch((error: unknown) => {
      this.storeLimiter = undefined
      throw error
    })
    return this.storeLimiter
  }
}

/** Whether a shared store answers; what to do and log when it does not (see the file's comment). */
class StoreHealth {
  private down = false
  private retryAt = 0

  constructor(
    private readonly label: string,
    private readonly logger: LoggerInstance,
    private readonly timeoutMs: number,
  ) {}

  async run<T>(useStore: () => Promise<T>, useMemory: () => Promise<T>): Promise<T> {
    if (this.down) {
      if (Date.now() < this.retryAt) return useMemory()
      // One request tries the store again; the others keep counting in memory meanwhile, instead of
      // each waiting up to the timeout on a store that may still be down.
      this.retryAt = Date.now() + STORE_RETRY_MS
    }
    let result: T
    try {
      result = await withDeadline(useStore(), this.timeoutMs, this.label)
    } catch (error) {
      // A refusal is an answer: the store is up.
      if (error instanceof RateLimiterRes) {
        this.recovered()
        throw error
      }
      this.failed(error)
      return useMemory()
    }
    this.recovered()
    return result
  }

  private failed(error: unknown): void {
    this.retryAt = Date.now() + STORE_RETRY_MS
    if (this.down) return
    this.down = true
    this.logger.error(
      'RateLimitStoreError',
      `The rate-limit store (${this.label}) failed: ${describeError(error)}. Sign-in attempts are counted in this process's memory until it answers again ` +
        `(same limits, but each process counts on its own); it is tried again every ${STORE_RETRY_MS / 1000} s.`,
    )
  }

  private recovered(): void {
    if (!this.down) return
    this.down = false
    this.logger.warn('RateLimitStoreRecovered', `The rate-limit store (${this.label}) answers again; sign-in attempts are counted there again.`)
  }
}

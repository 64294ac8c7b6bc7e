/**
 * Time limits on what a request waits for from a shared store (`session.storeTimeoutMs`): the
 * session store's reads and writes, and with database sessions the adapter's session methods. A
 * Redis that is paused, failing over or cut off by a partition without a reset does not fail a
 * command: it leaves it unanswered, for as long as TCP keepalive takes (minutes). Bounded here, such a
 * call fails like any other store failure (an `AdapterError`), so the outage rule applies at once
 * (docs/sessions.md): known sessions in, others a 503, sign-in refused with its error.
 */
import { InvalidConfigurationError } from '../../errors.js'

/** The limits, resolved. */
export interface StoreTimeouts {
  /** Milliseconds a read (a session's state, the poll for changes, a lease's value) may take. */
  readonly readMs: number
  /** Milliseconds a write (a sign-in's record, a sign-out, a lease) may take. */
  readonly writeMs: number
}

/**
 * Reads: a Redis or database round trip takes a millisecond or two; a quarter of a second is far
 * beyond a healthy store's slowest answers and short enough that a user does not notice the wait.
 * Writes are given longer: a sign-in or sign-out refused over a slow commit costs the user a retry.
 */
export const DEFAULT_STORE_TIMEOUTS: StoreTimeouts = Object.freeze({ readMs: 250, writeMs: 1000 })

/**
 * The adapter's, unless `session.storeTimeoutMs` is set: the app's own database, whose pool a burst of
 * requests queues on (50 concurrent reads on a pool of 10 on a busy 2-core machine took over 250 ms
 * to get a connection), so a busy pool is not taken for an outage; a database that does not answer
 * still fails in seconds, not in Knex's 60 s acquire timeout.
 */
export const DEFAULT_ADAPTER_TIMEOUTS: StoreTimeouts = Object.freeze({ readMs: 2000, writeMs: 5000 })

/** The cause of the `AdapterError` of a call that got no answer in time. */
export class StoreTimeoutError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StoreTimeoutError'
  }
}

/**
 * Resolves `session.storeTimeoutMs`: a number for both limits, or `{ read, write }`.
 * @throws InvalidConfigurationError naming the field to fix.
 */
export function resolveStoreTimeouts(option: number | { read?: number | undefined; write?: number | undefined } | undefined): StoreTimeouts {
  if (option === undefined) return DEFAULT_STORE_TIMEOUTS
  if (typeof option === 'number') return Object.freeze({ readMs: milliseconds('session.storeTimeoutMs', option), writeMs: milliseconds('session.storeTimeoutMs', option) })
  if (option === null || typeof option !== 'object') {
    throw new InvalidConfigurationError(`session.storeTimeoutMs must be a number of milliseconds or { read, write }; got ${String(option)}.`)
  }
  return Object.freeze({
    readMs: option.read === undefined ? DEFAULT_STORE_TIMEOUTS.readMs : milliseconds('session.storeTimeoutMs.read', option.read),
    writeMs: option.write === undefined ? DEFAULT_STORE_TIMEOUTS.writeMs : milliseconds('session.storeTimeoutMs.write', option.write),
  })
}

function milliseconds(name: string, value: unknown): number {
  // setTimeout's own limit (2^31 - 1 ms); below 1 ms a timer cannot tell the difference.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw new InvalidConfigurationError(`${name} must be a whole number of milliseconds (at least 1); got ${String(value)}.`)
  }
  return value
}

/**
 * `promise`, or a `StoreTimeoutError` when it has not settled within `ms`.
 *
 * The rejection waits one turn of the event loop after the timer fires: timers run before the
 * loop reads its sockets, so after a long synchronous stretch (a module compiled, a large JSON
 * parsed) an answer that has arrived meanwhile is taken rather than refused. A late failure of
 * `promise` is dropped, never an unhandled rejection.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(new StoreTimeoutError(`${what}: no answer within ${ms} ms`))), ms)
    // A pending call is never a reason for the process to stay up.
    timer.unref()
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

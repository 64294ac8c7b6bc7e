/**
 * The cap on concurrent password hashes (the Password provider's `hashingLimit`): at most
 * `concurrency` hashes or verifications at once per provider in this process, then a short queue,
 * then a refusal at once (`PasswordBusyError`, a 503 with `Retry-After` from the routes).
 *
 * A hash holds one of libuv's threads (4 by default, UV_THREADPOOL_SIZE) for its whole run, and the
 * same threads serve the app's file system, DNS lookups and zlib. Without a cap a burst of sign-ins,
 * or wrong passwords posted from many addresses (which the per-client rate limit does not stop),
 * would take every thread and queue unboundedly: every other request of the app waits behind them.
 */
import { PasswordBusyError } from './errors.js'

/** A semaphore with a bounded queue. */
export interface HashingLimit {
  /**
   * Runs `task` once a place is free; rejects at once with `PasswordBusyError` when `concurrency`
   * tasks run and `queue` wait already.
   */
  run<T>(task: () => Promise<T>): Promise<T>
  /** Tasks running and waiting now (for tests and the bench). */
  readonly active: number
  readonly waiting: number
}

/** Creates the cap; `concurrency` and `queue` are checked by the provider at init. */
export function createHashingLimit({ concurrency, queue }: { readonly concurrency: number; readonly queue: number }): HashingLimit {
  let active = 0
  const waiting: (() => void)[] = []
  // The last task's run time, for Retry-After: how long the queue ahead takes to drain.
  let lastMs = 1000

  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else active--
  }

  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active >= concurrency) {
        if (waiting.length >= queue) throw new PasswordBusyError(Math.max(1, Math.ceil(((waiting.length + 1) * lastMs) / concurrency / 1000)))
        // The place is handed over by release(): `active` stays as it is.
        await new Promise<void>((resolve) => waiting.push(resolve))
      } else {
        active++
      }
      const started = performance.now()
      try {
        return await task()
      } finally {
        lastMs = performance.now() - started
        release()
      }
    },
    get active() {
      return active
    },
    get waiting() {
      return waiting.length
    },
  }
}

/**
 * The background prune (the `prune` option): every `everyMinutes`, the adapter's `prune`, the
 * features' `prune` hooks (accounts whose deletion grace period is over) and, with a Knex rate-limit
 * store, `pruneRateLimits`. Its timer never keeps the process alive, an abort of
 * `prune.signal` stops it, and a failure is logged and tried again next time: nothing here runs
 * inside a request, so nothing here can fail one.
 */
import { hooksOf } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { AdapterError } from '../../errors.js'
import { describeError, redactError } from '../../events.js'
import { pruneOf } from './config.js'

/** Starts the background prune of `config`, when its `prune` option is set. */
export function startPruning(config: ResolvedConfig): void {
  const prune = pruneOf(config)
  if (!prune || prune.signal?.aborted) return
  const stop = new AbortController()
  const interval = prune.everyMinutes * 60_000
  let timer: NodeJS.Timeout | undefined

  const schedule = (delay: number) => {
    timer = setTimeout(() => {
      void pruneOnce(config, stop.signal).finally(() => {
        if (!stop.signal.aborted) schedule(interval)
      })
    }, delay)
    // A process that has nothing else to do exits: pruning is never a reason to stay up.
    timer.unref()
  }
  // The first at a random moment of the first interval: many processes started together spread
  // out, and one restarted more often than the interval still prunes.
  schedule(Math.random() * interval)
  prune.signal?.addEventListener(
    'abort',
    () => {
      clearTimeout(timer)
      stop.abort()
    },
    { once: true },
  )
}

async function pruneOnce(config: ResolvedConfig, signal: AbortSignal): Promise<void> {
  const { adapter, rateLimit, logger } = config
  const prune = pruneOf(config)
  if (prune?.adapter && adapter?.prune) {
    try {
      const counts = await adapter.prune({ signal })
      logger.debug('Prune', counts ? `Pruned ${describeCounts(counts)}.` : 'Another process is pruning; skipped.')
    } catch (error) {
      // The adapter guard has logged an AdapterError already, with its redacted cause.
      if (!(error instanceof AdapterError)) logger.error('PruneError', 'Pruning the adapter’s tables failed; trying again next time:', describeError(redactError(error)))
    }
  }
  // The features' own rows, by what each resolved (the account wing: accounts whose deletion grace
  // period is over): the prune wing knows none of their options.
  for (const hook of hooksOf(config, 'prune')) {
    try {
      const counts = await hook(config, signal)
      if (Object.keys(counts).length > 0) logger.debug('Prune', `Pruned ${describeCounts(counts)}.`)
    } catch (error) {
      if (!(error instanceof AdapterError)) logger.error('PruneError', 'Pruning a feature’s rows failed; trying again next time:', describeError(redactError(error)))
    }
  }
  if (prune?.rateLimit && rateLimit && rateLimit.store.type === 'knex') {
    const { knex, tableName } = rateLimit.store
    try {
      // Loaded here: apps that do not prune never load the pruning code.
      const { pruneRateLimits } = await import('./rate-limits.js')
      const counts = await pruneRateLimits(knex as never, { tableName, signal })
      logger.debug('Prune', counts ? `Pruned ${describeCounts(counts)}.` : 'Another process is pruning the rate-limit table; skipped.')
    } catch (error) {
      logger.error('PruneError', 'Pruning the rate-limit table failed; trying again next time:', describeError(redactError(error)))
    }
  }
}

function describeCounts(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .map(([name, count]) => `${count} ${name}`)
    .join(', ')
}

/**
 * The background prune (`prune` option): expired sessions, tokens and rate-limit rows deleted in
 * batches, every `everyMinutes`, off the request path.
 */
import type { Feature } from '../../composition/index.js'
import { resolvePrune } from './config.js'
import { startPruning } from './start.js'

export const pruneFeature: Feature = {
  name: 'prune',
  resolve: (config, init) => resolvePrune(config.prune, init.adapter, init.rateLimit),
  hooks: { started: startPruning },
  adapterMethods: ['prune'],
}

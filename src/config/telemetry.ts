/** The `telemetry` option, resolved at init (docs/configuration.md#opentelemetry). */
import { InvalidConfigurationError } from '../errors.js'
import type { TelemetryOptions } from '../types.js'

/** The `telemetry` option, resolved. */
export interface ResolvedTelemetry {
  readonly sessionReads: boolean
}

/** `false` when off (the default); throws on a value that is neither a boolean nor an options object. */
export function resolveTelemetry(option: TelemetryOptions | boolean | undefined): ResolvedTelemetry | false {
  if (option === undefined || option === false) return false
  if (option === true) return { sessionReads: false }
  if (typeof option !== 'object' || option === null) throw new InvalidConfigurationError('telemetry must be true, false or { sessionReads?: boolean }.')
  if (option.sessionReads !== undefined && typeof option.sessionReads !== 'boolean') throw new InvalidConfigurationError('telemetry.sessionReads must be a boolean.')
  return { sessionReads: option.sessionReads === true }
}

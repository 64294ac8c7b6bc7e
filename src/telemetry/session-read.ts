/**
 * `auth()`'s session read as a span (`portcullis.session.read`) and a count
 * (`portcullis.session.reads`, by outcome), with `telemetry: { sessionReads: true }` only. Chosen
 * once, when the API is made: with it off the read is the same function as without telemetry, not
 * one that asks on every call.
 */
import type { ResolvedConfig } from '../config/types.js'
import { count, traced } from './otel.js'

/** `read`, or with `sessionReads` on, `read` in a span that counts its outcome. */
export function sessionReadTelemetry<Args extends unknown[], Result>(config: ResolvedConfig, read: (...args: Args) => Promise<Result | null>): (...args: Args) => Promise<Result | null> {
  if (!config.telemetry || !config.telemetry.sessionReads) return read
  return (...args) =>
    traced(config, 'portcullis.session.read', {}, async () => {
      try {
        const session = await read(...args)
        count(config, 'portcullis.session.reads', { 'portcullis.outcome': session ? 'session' : 'none' })
        return session
      } catch (error) {
        count(config, 'portcullis.session.reads', { 'portcullis.outcome': 'error' })
        throw error
      }
    })
}

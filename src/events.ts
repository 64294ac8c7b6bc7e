/**
 * Events (spec §6): audit hooks that return nothing. They are awaited, so an audit log is written
 * before the response goes out, but one that throws is logged and the flow goes on.
 */
import type { ResolvedConfig } from './config/resolve.js'
import type { EventsOptions } from './types.js'

/** Runs the `name` event handler, if any; never throws. */
export async function emitEvent<Name extends keyof EventsOptions>(
  config: ResolvedConfig,
  name: Name,
  message: Parameters<NonNullable<EventsOptions[Name]>>[0],
): Promise<void> {
  const handler = config.events[name] as ((message: unknown) => unknown) | undefined
  if (!handler) return
  try {
    await handler(message)
  } catch (error) {
    config.logger.error('EventError', `The ${name} event handler threw; the ${name} went ahead.`, describeError(error))
  }
}

/** An error as a log line: its name and message, never its enumerable properties (which may hold request data). */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}

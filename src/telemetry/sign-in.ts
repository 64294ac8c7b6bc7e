/** A completed sign-in in `portcullis.sign_ins` (counted where the `signIn` event fires, for every method). */
import type { ResolvedConfig } from '../config/types.js'
import type { EventMessage } from '../types.js'
import { providerAttributes } from './action.js'
import { count } from './otel.js'

/** Counts the sign-in of a `signIn` event's message, when `telemetry` is on. */
export function countSignIn(config: ResolvedConfig, message: EventMessage<'signIn'>): void {
  const attributes = providerAttributes(config, message.account?.provider)
  count(config, 'portcullis.sign_ins', { 'portcullis.method': message.account?.type ?? 'unknown', ...attributes, 'portcullis.outcome': 'success' })
}

/**
 * The identifiers of an event's message (EventFields), for the catch-all `'*'` event handler: the
 * user, the provider, and the few plain facts an audit line needs. Built field by field from what
 * each event names, never by copying the message: an account holds the provider's tokens, a
 * database session its token, a JWT whatever the app sealed in it.
 */
import type { EventFields, EventMessage, EventName } from './types.js'

/** The identifiers of `message`, the message of event `name`. */
export function eventFields<Name extends EventName>(name: Name, message: EventMessage<Name>): EventFields {
  const event = message as {
    user?: { id?: unknown }
    account?: { provider?: unknown } | null
    userId?: unknown
    token?: { sub?: unknown } | null
    session?: { userId?: unknown } | null
    isNewUser?: unknown
    by?: unknown
    remaining?: unknown
  }
  const fields: EventFields = {}
  const userId = event.user?.id ?? event.userId ?? event.token?.sub ?? event.session?.userId
  if (typeof userId === 'string') fields.userId = userId
  if (typeof event.account?.provider === 'string') fields.provider = event.account.provider
  if (name === 'signIn' && typeof event.isNewUser === 'boolean') fields.isNewUser = event.isNewUser
  if (name === 'sessionRevoked' && typeof event.by === 'string') fields.by = event.by
  if (name === 'recoveryCodeUsed' && typeof event.remaining === 'number') fields.remaining = event.remaining
  return fields
}

/**
 * Changes a wing's field of the session itself (`SessionUserField.perSession`: the active
 * organization) on the request's session: a JWT session's token re-sealed with the new claim (its
 * session id kept), a database session's row written. The field is out of the app's callbacks'
 * reach on every read (user-fields.ts): this is the one way it changes after sign-in.
 */
import type { SessionAdapter } from '../config/adapter.js'
import type { SessionUserField } from '../config/types.js'
import type { OutgoingCookie } from './cookies.js'
import { peekDatabaseSession } from './database-strategy.js'
import { peekJwtToken, resealJwtToken } from './jwt-strategy.js'
import type { SessionRequest } from './types.js'

/**
 * Sets `field` to `value` (undefined: none) on the request's session.
 * @returns The cookies that carry the re-sealed token (none with database sessions); null when the request has no session.
 * @throws AdapterError when the row could not be written.
 */
export async function setSessionField(request: SessionRequest, field: SessionUserField, value: unknown): Promise<OutgoingCookie[] | null> {
  const { config } = request
  if (config.session.strategy === 'database') {
    const session = await peekDatabaseSession(request)
    if (!session || !field.perSession) return null
    const updated = await (config.adapter as SessionAdapter).updateSession({ sessionToken: session.sessionToken, ...field.perSession(value) })
    return updated === null ? null : []
  }
  const token = await peekJwtToken(request)
  if (!token) return null
  const { [field.name]: _previous, ...rest } = token
  return resealJwtToken(request, value === undefined ? rest : { ...rest, [field.name]: value })
}

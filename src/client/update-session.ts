import { postJson } from './config.js'
import { getCsrfToken } from './csrf.js'
import { announceSessionChange } from './session-change.js'
import type { Session } from './types.js'

/**
 * Asks the server to update the session: POST /session with the CSRF token and `data`, which the
 * server's `jwt` callback (JWT sessions) or `session` callback (database sessions) receives with
 * `trigger: 'update'`; what goes into the session is their decision. Resolves with the session
 * as it now is, and tells `onSessionChange` listeners, in this tab and the others.
 *
 * @param data Anything JSON can carry.
 * @throws AuthClientError: `MissingCSRF` (403), `SessionTokenTooLarge` (413: the cookie would
 *   grow too large; the old session stands), `AdapterError` (503), or a transport code.
 * @example
 * const session = await updateSession({ theme: 'dark' })
 */
export async function updateSession<S extends Session = Session>(data?: unknown): Promise<S | null> {
  const session = await postJson<S | null>('/session', { csrfToken: await getCsrfToken(), data })
  await announceSessionChange()
  return session
}

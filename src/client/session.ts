import { getJson } from './config.js'
import type { Session } from './types.js'

/**
 * The session of this browser, or null when signed out. Asking also keeps the session alive (the
 * server re-issues the cookie when due).
 *
 * @example
 * const session = await getSession()
 * if (session) console.log(session.user.email)
 * @throws AuthClientError when the server cannot answer (e.g. `AdapterError` with 503): not the
 *   same as signed out.
 */
export function getSession<S extends Session = Session>(): Promise<S | null> {
  return getJson('/session')
}

/** The server-side `revokeSession(req, id)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { endedHere, revokeFor, sessionsCall, type SessionsCallContext } from '../../../api/sessions-context.js'

/**
 * Ends one of the signed-in user's sessions (an id from `listSessions`). CSRF-checked: pass the form's
 * `csrfToken` (default `req.body.csrfToken`). Ending the request's own session signs it out (its
 * cookie cleared on `res`, or Express's `req.res`).
 * @returns false when the id names no session of this user (another user's ids are never ended).
 * @throws MissingCSRFError
 */
export type RevokeSessionFunction = (req: SessionsCallContext, id: string, options?: CsrfOptions) => Promise<boolean>

export function createRevokeSession(api: Api): RevokeSessionFunction {
  return async (given, id, options = {}) => {
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('revokeSession(req, id): id must be a session id from listSessions().')
    const call = sessionsCall(api, given, 'revokeSession()')
    const { ids, owner } = await revokeFor(api, call, options, 'revokeSession()', () => ({ only: id }), 'revokeSession')
    if (ids.length > 0 && owner?.sessionId === id) endedHere(api, call, 'revokeSession()')
    return ids.length > 0
  }
}

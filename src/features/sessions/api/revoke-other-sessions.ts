/** The server-side `revokeOtherSessions(req)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { revokeFor, sessionsCall, type SessionsCallContext } from '../../../api/sessions-context.js'

/** Ends every session of the signed-in user but the request's own; resolves with how many. CSRF-checked. */
export type RevokeOtherSessionsFunction = (req: SessionsCallContext, options?: CsrfOptions) => Promise<number>

export function createRevokeOtherSessions(api: Api): RevokeOtherSessionsFunction {
  return async (given, options = {}) => {
    const call = sessionsCall(api, given, 'revokeOtherSessions()')
    const { ids } = await revokeFor(api, call, options, 'revokeOtherSessions()', (current) => ({ except: current ?? '' }), 'revokeOtherSessions')
    return ids.length
  }
}

/** The server-side `signOutEverywhere(req)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { endedHere, revokeFor, sessionsCall, type SessionsCallContext } from '../../../api/sessions-context.js'

/**
 * Ends every session of the signed-in user, the request's own included (its cookie cleared on `res`,
 * or Express's `req.res`); resolves with how many. CSRF-checked.
 */
export type SignOutEverywhereFunction = (req: SessionsCallContext, options?: CsrfOptions) => Promise<number>

export function createSignOutEverywhere(api: Api): SignOutEverywhereFunction {
  return async (given, options = {}) => {
    const call = sessionsCall(api, given, 'signOutEverywhere()')
    const { ids, owner } = await revokeFor(api, call, options, 'signOutEverywhere()', () => ({}), 'signOutEverywhere', { everyToken: true })
    if (owner) endedHere(api, call, 'signOutEverywhere()')
    return ids.length
  }
}

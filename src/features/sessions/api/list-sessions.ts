/** The server-side `listSessions(req)`. */
import { listOwnSessions, sessionOwner } from '../../../session/devices.js'
import type { SessionInfo } from '../../../types.js'
import type { Api } from '../../../api/context.js'
import { sessionsCall, type SessionsCallContext } from '../../../api/sessions-context.js'

/**
 * The signed-in user's sessions (every device), the request's own first and marked `current`, then by
 * last use; `[]` when nobody is signed in. With database sessions one query; JWT sessions need `session.store`.
 * @throws InvalidConfigurationError for JWT sessions without `session.store`.
 * @example
 * ```ts
 * app.get('/account/devices', async (req, res) => res.json(await listSessions(req)))
 * ```
 */
export type ListSessionsFunction = (req: SessionsCallContext) => Promise<SessionInfo[]>

export function createListSessions(api: Api): ListSessionsFunction {
  return async (given) => {
    const { ctx } = sessionsCall(api, given, 'listSessions()')
    const owner = await sessionOwner(ctx)
    return owner ? listOwnSessions(ctx, owner) : []
  }
}

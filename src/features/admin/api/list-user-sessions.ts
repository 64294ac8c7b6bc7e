/** The server-side `listUserSessions(req, userId)`: an administrator sees where a user is signed in. */
import type { Api } from '../../../api/context.js'
import { listOwnSessions } from '../../../session/devices.js'
import type { SessionInfo } from '../../../types.js'
import { adminCall, sessionsRecorded, type AdminCallContext } from './context.js'
import { assertUserId } from './help-user.js'

/**
 * The unexpired sessions of user `userId`, newest first, as `listSessions()` shows a user their own
 * (when and where from; none is `current`); null when nothing records sessions (JWT sessions
 * without `session.store`). Needs `user: ['list']`. End them with `revokeUserSessions`.
 *
 * @throws AdminError `not_signed_in`, `forbidden`; UnknownActionError (`admin` off); TypeError
 * @example
 * ```ts
 * app.get('/admin/users/:id/sessions', async (req, res) => res.json(await listUserSessions(req, req.params.id)))
 * ```
 */
export type ListUserSessionsFunction = (req: AdminCallContext, userId: string) => Promise<SessionInfo[] | null>

export function createListUserSessions(api: Api): ListUserSessionsFunction {
  return async (given, userId) => {
    assertUserId(userId, 'listUserSessions')
    const { ctx } = await adminCall(api, given, 'listUserSessions()', 'list')
    if (!sessionsRecorded(api)) return null
    return listOwnSessions(ctx, { userId, sessionId: undefined })
  }
}

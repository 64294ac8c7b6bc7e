/** GET /sessions/list: the user's sessions as JSON, `{ sessions }`; 401 when signed out. */
import { assertSessionsListable, listOwnSessions, sessionOwner } from '../../../session/devices.js'
import type { Action } from '../../../actions/context.js'

export const listSessions: Action = async (ctx) => {
  assertSessionsListable(ctx.config)
  const owner = await sessionOwner(ctx)
  if (!owner) return { status: 401, json: { error: 'Unauthorized', message: 'Nobody is signed in on this request.' } }
  return { json: { sessions: await listOwnSessions(ctx, owner) } }
}

/**
 * POST /sessions/revoke `{ csrfToken, id }`: ends one of the user's sessions, then back to the
 * sessions page (or, when it was this browser's own, signed out to the site's root). An id that
 * is not one of the user's ends nothing.
 */
import { revokeOwnSessions } from '../../../session/devices.js'
import { sessionEndedCookies } from '../../../session/strategy.js'
import { assertCsrf, type Action } from '../../../actions/context.js'
import { backToSessions, ownerOrSignIn, postedSessionId } from './shared.js'

export const revokeSession: Action = async (ctx) => {
  assertCsrf(ctx)
  const id = postedSessionId(ctx)
  const asking = await ownerOrSignIn(ctx)
  if ('response' in asking) return asking.response
  const ended = await revokeOwnSessions(ctx, asking.owner, { only: id }, 'revokeSession')
  if (ended.length > 0 && id === asking.owner.sessionId) return { redirect: `${ctx.origin}/`, cookies: sessionEndedCookies(ctx) }
  return backToSessions(ctx)
}

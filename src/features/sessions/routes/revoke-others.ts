/** POST /sessions/revoke-others `{ csrfToken }`: ends every session of the user but this one. */
import { revokeOwnSessions } from '../../../session/devices.js'
import { assertCsrf, type Action } from '../../../actions/context.js'
import { backToSessions, ownerOrSignIn } from './shared.js'

export const revokeOtherSessions: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await ownerOrSignIn(ctx)
  if ('response' in asking) return asking.response
  await revokeOwnSessions(ctx, asking.owner, { except: asking.owner.sessionId ?? '' }, 'revokeOtherSessions')
  return backToSessions(ctx)
}

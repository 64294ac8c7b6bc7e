/**
 * POST /sessions/signout-everywhere `{ csrfToken, callbackUrl? }`: ends every session of the user,
 * this one included, and goes to `callbackUrl` (same-origin, through the `redirect` callback) or
 * the site's root.
 */
import { revokeOwnSessions } from '../../../session/devices.js'
import { sessionEndedCookies } from '../../../session/strategy.js'
import { assertCsrf, redirectTarget, stringValue, type Action } from '../../../actions/context.js'
import { ownerOrSignIn } from './shared.js'

export const signOutEverywhere: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await ownerOrSignIn(ctx)
  if ('response' in asking) return asking.response
  await revokeOwnSessions(ctx, asking.owner, {}, 'signOutEverywhere', { everyToken: true })
  const callbackUrl = stringValue(ctx.body.callbackUrl)
  return { redirect: callbackUrl === undefined ? `${ctx.origin}/` : await redirectTarget(ctx, callbackUrl), cookies: sessionEndedCookies(ctx) }
}

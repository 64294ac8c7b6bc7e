/**
 * POST /admin/user/impersonate `{ csrfToken, id, callbackUrl? }`: an administrator (`user:
 * ['impersonate']`) starts impersonating the user, then goes to `callbackUrl` (same-origin, through
 * the `redirect` callback) or the app's home page. A refusal answers as the other actions do: the
 * user's page saying why.
 */
import { assertCsrf, redirectTarget, stringValue, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { adminCall } from '../api/context.js'
import { startImpersonation } from '../impersonation.js'
import { actionRefusal, adminRequest, postedUserId } from './shared.js'

export const impersonateAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const userId = postedUserId(ctx, 'impersonate')
  const { api, call } = adminRequest(ctx)
  try {
    const { callerId } = await adminCall(api, call, 'POST /admin/user/impersonate', 'impersonate', { csrfToken: stringValue(ctx.body.csrfToken) })
    const started = await startImpersonation(api, ctx, callerId, userId, undefined)
    return { redirect: await redirectTarget(ctx, stringValue(ctx.body.callbackUrl) ?? homeUrl(ctx)), cookies: started.cookies }
  } catch (error) {
    return actionRefusal(ctx, userId, error, 'The impersonation was refused.')
  }
}

/**
 * GET /session: the session as JSON (`null` when signed out).
 * POST /session: CSRF-checked update; `data` goes to the `jwt` callback with `trigger: 'update'`.
 */
import { readJwtSession } from '../session/jwt-strategy.js'
import { MissingCSRFError } from '../errors.js'
import { describeError } from '../events.js'
import type { AuthResponse } from '../http/respond.js'
import { csrfVerified, type Action, type ActionContext } from './context.js'

export const getSession: Action = async (ctx) => sessionJson(ctx)

export const updateSession: Action = async (ctx) => {
  // A JSON endpoint: a failed check answers 403 JSON, not a redirect to a page.
  if (!csrfVerified(ctx)) return { status: 403, json: { error: 'MissingCSRF', message: new MissingCSRFError().message } }
  return sessionJson(ctx, { data: ctx.body.data })
}

/**
 * The session as JSON. Clients parse this route as JSON, so a `jwt` or `session` callback that
 * throws gives `null` (and a log line), not an error page. The cookie is kept: a passing failure
 * (the callback's database is down) must not sign the user out.
 */
async function sessionJson(ctx: ActionContext, update?: { data: unknown }): Promise<AuthResponse> {
  try {
    const { session, cookies } = await readJwtSession(ctx, update)
    return { json: session, cookies }
  } catch (error) {
    ctx.config.logger.error('SessionError', `Reading the session failed in a callback: ${describeError(error)}`)
    return { json: null }
  }
}

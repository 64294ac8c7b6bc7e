/**
 * GET /session: the session as JSON (`null` when signed out).
 * POST /session: CSRF-checked update; `data` goes to the `jwt` callback (JWT sessions) or the
 * `session` callback as `newSession` (database sessions), with `trigger: 'update'`.
 */
import { AdapterError, SessionTokenTooLargeError } from '../errors.js'
import { describeError } from '../events.js'
import type { AuthResponse } from '../http/respond.js'
import { readSession } from '../session/strategy.js'
import { csrfVerified, type Action, type ActionContext } from './context.js'
import { failureAdvice } from './failure-advice.js'

export const getSession: Action = async (ctx) => sessionJson(ctx)

export const updateSession: Action = async (ctx) => {
  // A JSON endpoint: a failed check answers 403 JSON with the fix, not a redirect to a page.
  if (!csrfVerified(ctx)) return { status: 403, json: { error: 'MissingCSRF', message: failureAdvice({ error: 'MissingCSRF' }, ctx.basePath).message } }
  return sessionJson(ctx, { data: ctx.body.data })
}

/**
 * The session as JSON. Clients parse this route as JSON, so a `jwt` or `session` callback that
 * throws gives `null` (and a log line), not an error page, and a failing session store a 503 with
 * the code `AdapterError`. The cookie is kept either way: a passing failure must not sign the user out.
 */
async function sessionJson(ctx: ActionContext, update?: { data: unknown }): Promise<AuthResponse> {
  try {
    const { session, cookies } = await readSession(ctx, update)
    return { json: session, cookies }
  } catch (error) {
    if (error instanceof AdapterError) {
      return { status: 503, json: { error: error.type, message: 'The session store is unavailable; try again in a moment.' } }
    }
    if (error instanceof SessionTokenTooLargeError) {
      // Not `null`: a client would read that as signed out. The old cookie stands.
      ctx.config.logger.error(error.type, error.message)
      return { status: 413, json: { error: error.type, message: 'The update would make the session cookie too large.' } }
    }
    ctx.config.logger.error('SessionError', `Reading the session failed in a callback: ${describeError(error)}`)
    return { json: null }
  }
}

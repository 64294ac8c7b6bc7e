/**
 * GET /session: the session as JSON (`null` when signed out).
 * POST /session: CSRF-checked update; `data` goes to the `jwt` callback with `trigger: 'update'`.
 */
import { readJwtSession } from '../session/jwt-strategy.js'
import { MissingCSRFError } from '../errors.js'
import { csrfVerified, type Action } from './context.js'

export const getSession: Action = async (ctx) => {
  const { session, cookies } = await readJwtSession(ctx)
  return { json: session, cookies }
}

export const updateSession: Action = async (ctx) => {
  // A JSON endpoint: a failed check answers 403 JSON, not a redirect to a page.
  if (!csrfVerified(ctx)) return { status: 403, json: { error: 'MissingCSRF', message: new MissingCSRFError().message } }
  const { session, cookies } = await readJwtSession(ctx, { data: ctx.body.data })
  return { json: session, cookies }
}

/**
 * What the session list's server-side functions share (list-sessions.ts, revoke-session.ts,
 * revoke-other-sessions.ts, sign-out-everywhere.ts): the request they are called on, the CSRF check
 * of the ones that end sessions, and clearing the request's own cookie when its session ended.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ActionContext } from '../actions/context.js'
import type { NodeRequest } from '../http/request.js'
import { appendCookies } from '../http/respond.js'
import { assertSessionsListable, revokeOwnSessions, sessionOwner, type RevokedBy, type SessionOwner } from '../session/devices.js'
import { sessionEndedCookies } from '../session/strategy.js'
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from './context.js'

/** The request, or `{ req, res }`. */
export type SessionsCallContext = IncomingMessage | { req: IncomingMessage; res?: ServerResponse | undefined }

interface SessionsCall {
  req: NodeRequest
  /** `res` as given, else Express's `req.res`. */
  res: ServerResponse | undefined
  ctx: ActionContext
}

/**
 * The call on `given`.
 * @throws TypeError when `given` is not a request.
 * @throws InvalidConfigurationError when this instance cannot list or end sessions (JWT without a store).
 */
export function sessionsCall(api: Api, given: unknown, what: string): SessionsCall {
  const { req, res } = givenRequest(given, what)
  assertSessionsListable(api.config)
  return { req, res, ctx: actionContext(api, req) }
}

/**
 * CSRF-checks the call, then ends the owner's sessions that `which` picks from the current one.
 * @throws MissingCSRFError
 */
export async function revokeFor(
  api: Api,
  call: SessionsCall,
  options: CsrfOptions,
  what: string,
  which: (current: string | undefined) => { only: string } | { except?: string | undefined },
  by: RevokedBy,
  revoke: { everyToken?: boolean } = {},
): Promise<{ ids: string[]; owner: SessionOwner | null }> {
  assertServerCsrf(api, call.ctx, options, what)
  const owner = await sessionOwner(call.ctx)
  if (!owner) return { ids: [], owner }
  return { ids: await revokeOwnSessions(call.ctx, owner, which(owner.sessionId), by, revoke), owner }
}

/** The request's own session ended: clear its cookie on the response (or log why it cannot be). */
export function endedHere(api: Api, call: SessionsCall, what: string): void {
  const cookies = sessionEndedCookies(call.ctx)
  api.forgetSession(call.req, cookies)
  if (!call.res || call.res.headersSent) {
    api.config.logger.warn('SessionCookieNotCleared', `${what} ended this request's session, but no response (or one already sent) was given: its cookie stays until it is next read.`)
    return
  }
  appendCookies(call.res, cookies)
}

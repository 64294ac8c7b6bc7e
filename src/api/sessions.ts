/**
 * The server-side session list and its revocations: `listSessions`, `revokeSession`,
 * `revokeOtherSessions`, `signOutEverywhere`. The ones that end sessions are CSRF-checked like
 * `signOut()`. Each works on the request's own user only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { NodeRequest } from '../http/request.js'
import { appendCookies } from '../http/respond.js'
import { assertSessionsListable, listOwnSessions, revokeOwnSessions, sessionOwner } from '../session/devices.js'
import { sessionEndedCookies } from '../session/strategy.js'
import type { SessionInfo } from '../types.js'
import { actionContext, assertServerCsrf, contextRequest, isRequest, type Api, type CsrfOptions } from './context.js'

/** The request, or `{ req, res }`. */
export type SessionsCallContext = IncomingMessage | { req: IncomingMessage; res?: ServerResponse | undefined }

/**
 * The signed-in user's sessions (every device), newest first, the request's own marked `current`;
 * `[]` when nobody is signed in. With database sessions one query; JWT sessions need `session.store`.
 * @throws InvalidConfigurationError for JWT sessions without `session.store`.
 * @example
 * ```ts
 * app.get('/account/devices', async (req, res) => res.json(await listSessions(req)))
 * ```
 */
export type ListSessionsFunction = (req: SessionsCallContext) => Promise<SessionInfo[]>

/**
 * Ends one of the signed-in user's sessions (an id from `listSessions`). CSRF-checked: pass the form's
 * `csrfToken` (default `req.body.csrfToken`). Ending the request's own session signs it out.
 * @returns false when the id names no session of this user (another user's ids are never ended).
 * @throws MissingCSRFError
 */
export type RevokeSessionFunction = (req: SessionsCallContext, id: string, options?: CsrfOptions) => Promise<boolean>

/** Ends every session of the signed-in user but the request's own; returns how many. CSRF-checked. */
export type RevokeOtherSessionsFunction = (req: SessionsCallContext, options?: CsrfOptions) => Promise<number>

/**
 * Ends every session of the signed-in user, the request's own included (its cookie is cleared on
 * `res`, or Express's `req.res`); returns how many. CSRF-checked.
 */
export type SignOutEverywhereFunction = (req: SessionsCallContext, options?: CsrfOptions) => Promise<number>

/** The four functions, for one instance. */
export interface SessionsApi {
  listSessions: ListSessionsFunction
  revokeSession: RevokeSessionFunction
  revokeOtherSessions: RevokeOtherSessionsFunction
  signOutEverywhere: SignOutEverywhereFunction
}

export function createSessionsApi(api: Api): SessionsApi {
  const call = (given: unknown, what: string) => {
    const context = isRequest(given) ? { req: given as NodeRequest, res: (given as { res?: ServerResponse }).res } : contextRequest(given)
    if (!context) throw new TypeError(`${what} takes the request (or { req, res }) first.`)
    assertSessionsListable(api.config)
    const ctx = actionContext(api, context.req)
    return { req: context.req, res: context.res ?? (context.req as { res?: ServerResponse }).res, ctx }
  }

  const revoke = async (given: SessionsCallContext, options: CsrfOptions, what: string, which: (current: string | undefined) => { only: string } | { except?: string | undefined }, by: 'revokeSession' | 'revokeOtherSessions' | 'signOutEverywhere') => {
    const { req, res, ctx } = call(given, what)
    assertServerCsrf(api, ctx, options, what)
    const owner = await sessionOwner(ctx)
    if (!owner) return { ids: [] as string[], ctx, req, res, owner }
    return { ids: await revokeOwnSessions(ctx, owner, which(owner.sessionId), by), ctx, req, res, owner }
  }

  /** The request's own session was among those ended: clear its cookie. */
  const endHere = (req: NodeRequest, res: ServerResponse | undefined, ctx: ReturnType<typeof call>['ctx'], what: string) => {
    api.forgetSession(req)
    if (!res || res.headersSent) {
      api.config.logger.warn('SessionCookieNotCleared', `${what} ended this request's session, but no response (or one already sent) was given: its cookie stays until it is next read.`)
      return
    }
    appendCookies(res, sessionEndedCookies(ctx))
  }

  return {
    async listSessions(given) {
      const { ctx } = call(given, 'listSessions()')
      const owner = await sessionOwner(ctx)
      return owner ? listOwnSessions(ctx, owner) : []
    },
    async revokeSession(given, id, options = {}) {
      if (typeof id !== 'string' || id.length === 0) throw new TypeError('revokeSession(req, id): id must be a session id from listSessions().')
      const { ids, req, res, ctx, owner } = await revoke(given, options, 'revokeSession()', () => ({ only: id }), 'revokeSession')
      if (ids.length > 0 && owner?.sessionId === id) endHere(req, res, ctx, 'revokeSession()')
      return ids.length > 0
    },
    async revokeOtherSessions(given, options = {}) {
      // A JWT session without an id (no store) has nothing to keep apart: the store is required anyway.
      const { ids } = await revoke(given, options, 'revokeOtherSessions()', (current) => ({ except: current ?? '' }), 'revokeOtherSessions')
      return ids.length
    },
    async signOutEverywhere(given, options = {}) {
      const { ids, req, res, ctx, owner } = await revoke(given, options, 'signOutEverywhere()', () => ({}), 'signOutEverywhere')
      if (owner) endHere(req, res, ctx, 'signOutEverywhere()')
      return ids.length
    },
  }
}

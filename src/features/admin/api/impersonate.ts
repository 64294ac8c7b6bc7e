/**
 * The server-side `impersonateUser(req, userId)` and `stopImpersonating(req)`: an administrator
 * signs in as a user for a limited time, then goes back to their own session.
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import { UnknownActionError } from '../../../errors.js'
import { appendCookies } from '../../../http/respond.js'
import type { OutgoingCookie } from '../../../session/cookies.js'
import type { ServerResponse } from 'node:http'
import type { NodeRequest } from '../../../http/request.js'
import { startImpersonation, stopImpersonation } from '../impersonation.js'
import type { ImpersonateUserOptions } from '../types.js'
import { adminCall, type AdminCallContext } from './context.js'
import { assertUserId } from './help-user.js'

/**
 * Signs the request's browser in as user `userId` for `expiresIn` seconds (default and most:
 * `admin.impersonationMaxAge`, an hour): a session of theirs that carries `impersonatedBy` (the
 * administrator's id, in `req.auth` too), is never extended, and changes none of their credentials
 * (password, address, second factor, passkeys, linked accounts). The administrator's own session is
 * kept, and comes back with `stopImpersonating`. Needs `user: ['impersonate']` and the response
 * (its cookies); CSRF-checked. Refused for oneself, a banned user, and a user whose roles grant an
 * admin action (unless `admin.impersonateAdmins`).
 *
 * @returns The user and when the impersonation ends.
 * @throws AdminError `not_signed_in`, `forbidden`, `impersonating`, `own_roles`, `not_found`, `banned`, `impersonate_admin`; MissingCSRFError; TypeError
 * @example
 * ```ts
 * app.post('/admin/users/:id/impersonate', express.urlencoded({ extended: false }), async (req, res) => {
 *   await impersonateUser({ req, res }, req.params.id, { csrfToken: req.body.csrfToken })
 *   res.redirect('/')
 * })
 * ```
 */
export type ImpersonateUserFunction = (req: AdminCallContext, userId: string, options?: ImpersonateUserOptions) => Promise<{ userId: string; expires: Date }>

/**
 * Ends the request's impersonation and puts the administrator's own session back (no permission
 * needed: the session is the impersonated user's). CSRF-checked.
 * @returns The user who was impersonated.
 * @throws AdminError `not_impersonating`; MissingCSRFError; UnknownActionError (`admin` off)
 */
export type StopImpersonatingFunction = (req: AdminCallContext, options?: CsrfOptions) => Promise<{ userId: string }>

export function createImpersonateUser(api: Api): ImpersonateUserFunction {
  return async (given, userId, options = {}) => {
    assertUserId(userId, 'impersonateUser')
    const res = responseOf(given, 'impersonateUser()')
    const { ctx, callerId } = await adminCall(api, given, 'impersonateUser()', 'impersonate', options)
    const started = await startImpersonation(api, ctx, callerId, userId, options.expiresIn)
    send(api, ctx.req, res, started.cookies)
    return { userId, expires: started.expires }
  }
}

export function createStopImpersonating(api: Api): StopImpersonatingFunction {
  return async (given, options = {}) => {
    const res = responseOf(given, 'stopImpersonating()')
    const { req } = givenRequest(given, 'stopImpersonating()')
    if (!api.config.features.admin) throw new UnknownActionError('stopImpersonating(): the admin API is off. Set admin: true (with the roles option). See docs/admin.md.')
    const ctx = actionContext(api, req)
    assertServerCsrf(api, ctx, options, 'stopImpersonating()')
    const stopped = await stopImpersonation(ctx)
    send(api, req, res, stopped.cookies)
    return { userId: stopped.userId }
  }
}

function responseOf(given: unknown, what: string): ServerResponse {
  const { res } = givenRequest(given, what)
  if (!res) throw new TypeError(`${what} sets the session cookies: pass { req, res } (Express's req carries res itself).`)
  return res
}

// The cookies on the response, and this request's later auth() reads see them (as signIn's do).
function send(api: Api, req: NodeRequest, res: ServerResponse, cookies: OutgoingCookie[]): void {
  api.forgetSession(req, cookies)
  if (!res.headersSent) appendCookies(res, cookies)
}

/**
 * What the organizations' server-side functions share: the request they are called on, the CSRF rule
 * of the ones that change something, the signed-in caller, and the engine, imported on first use.
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import type { NodeRequest } from '../../../http/request.js'
import type { ServerResponse } from 'node:http'
import { appendCookies } from '../../../http/respond.js'
import type { OutgoingCookie } from '../../../session/cookies.js'
import { callerOf, optionsOf, type Caller } from '../call.js'

/** The request, or `{ req, res }`. */
export type OrganizationsCallContext = SessionsCallContext

let engine: Promise<typeof import('../manage.js')> | undefined

/** The engine, imported on first use. */
export function loadManage(): Promise<typeof import('../manage.js')> {
  return (engine ??= import('../manage.js'))
}

let invitations: Promise<typeof import('../invitations.js')> | undefined

/** The invitations' engine, imported on first use. */
export function loadInvitations(): Promise<typeof import('../invitations.js')> {
  return (invitations ??= import('../invitations.js'))
}

/**
 * The call on `given` for the user signed in by its cookie session.
 * @param csrf Check the CSRF token (the functions that change something) with these options.
 * @throws TypeError, InvalidConfigurationError (option off), MissingCSRFError, OrganizationError `not_signed_in`
 */
export async function organizationCall(api: Api, given: unknown, what: string, csrf?: CsrfOptions): Promise<{ caller: Caller; req: NodeRequest; res: ServerResponse | undefined; manage: Awaited<ReturnType<typeof loadManage>> }> {
  const { req, res } = givenRequest(given, what)
  optionsOf(api.config, what)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  return { caller: await callerOf(ctx, what), req, res, manage: await loadManage() }
}

/** Sets a call's session cookies on the response (and on the request's next read). */
export function sendCookies(api: Api, req: NodeRequest, res: ServerResponse | undefined, cookies: readonly OutgoingCookie[]): void {
  if (cookies.length > 0 && res && !res.headersSent) appendCookies(res, cookies)
  api.forgetSession(req, cookies)
}

/** @throws TypeError when a JWT session's new cookie would have no response to go on. */
export function assertResponse(api: Api, res: ServerResponse | undefined, what: string): void {
  if (api.config.session.strategy === 'jwt' && (!res || res.headersSent)) {
    throw new TypeError(`${what}: the session's new cookie must be set on the response: pass { req, res } (with Express, req.res is used), before the response is sent.`)
  }
}

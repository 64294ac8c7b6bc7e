/**
 * What `signUp` and `changePassword` share (sign-up.ts, change-password.ts): the request they are
 * called on, with its response when there is one.
 */
import type { ServerResponse } from 'node:http'
import type { ActionContext } from '../../../actions/context.js'
import type { NodeRequest } from '../../../http/request.js'
import { actionContext, givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'

/** The request, or `{ req, res }` (as for the session list's functions). */
export type PasswordCallContext = SessionsCallContext

/**
 * The call on `given`.
 * @throws TypeError when `given` is not a request.
 */
export function passwordCall(api: Api, given: unknown, what: string): { req: NodeRequest; res: ServerResponse | undefined; ctx: ActionContext } {
  const { req, res } = givenRequest(given, what)
  return { req, res, ctx: actionContext(api, req) }
}

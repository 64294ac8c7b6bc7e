/** What the session list's routes share: who is asking, and where they go next. */
import { InvalidRequestError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { assertSessionsListable, sessionOwner, type SessionOwner } from '../../../session/devices.js'
import { authUrl, pageUrl, type ActionContext } from '../../../actions/context.js'

/** The request's user and session, or the response that sends a signed-out visitor to sign in. */
export async function ownerOrSignIn(ctx: ActionContext): Promise<{ owner: SessionOwner } | { response: AuthResponse }> {
  assertSessionsListable(ctx.config)
  const owner = await sessionOwner(ctx)
  if (owner) return { owner }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/sessions') }) } }
}

/** Back to the sessions page after ending some. */
export function backToSessions(ctx: ActionContext): AuthResponse {
  return { redirect: authUrl(ctx, '/sessions') }
}

/** The posted session id. @throws InvalidRequestError when there is none. */
export function postedSessionId(ctx: ActionContext): string {
  const id = ctx.body.id
  if (typeof id !== 'string' || id.length === 0 || id.length > 255) throw new InvalidRequestError('POST /sessions/revoke needs the id of one of your sessions (from GET /sessions/list).')
  return id
}

/**
 * POST /admin/impersonate `{ csrfToken, userId, callbackUrl? }`: an administrator (`user:
 * ['impersonate']`) starts impersonating a user, then to `callbackUrl` (same-origin, through the
 * `redirect` callback) or the app's home page. A refusal answers 403 (400 for a bad request) with
 * the impersonation page saying why.
 */
import { assertCsrf, redirectTarget, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import type { AuthResponse } from '../../../http/respond.js'
import { readSession, signedInUserId } from '../../../session/strategy.js'
import { AdminError } from '../errors.js'
import { startImpersonation } from '../impersonation.js'
import { adminStatements } from '../config.js'
import type { ResolvedRoles } from '../../roles/config.js'
import { impersonationPage } from './impersonation.js'

export const impersonateAction: Action = async (ctx) => {
  assertCsrf(ctx)
  try {
    const callerId = await impersonatingAdmin(ctx)
    const userId = stringValue(ctx.body.userId)
    if (!userId || userId.length > 255) return await impersonationPage(ctx, 400, 'Choose the user to impersonate.')
    const started = await startImpersonation(ctx, callerId, userId, undefined)
    const callbackUrl = stringValue(ctx.body.callbackUrl)
    return { redirect: await redirectTarget(ctx, callbackUrl ?? homeUrl(ctx)), cookies: started.cookies }
  } catch (error) {
    if (!(error instanceof AdminError)) throw error
    return refusal(ctx, error)
  }
}

/** The signed-in caller who may impersonate. @throws AdminError `not_signed_in`, `forbidden`, `impersonating` */
async function impersonatingAdmin(ctx: ActionContext): Promise<string> {
  const callerId = await signedInUserId(ctx)
  if (!callerId) throw new AdminError('not_signed_in', 'POST /admin/impersonate: nobody is signed in.')
  const { session } = await readSession(ctx)
  const roles = session?.user.roles
  const { access } = ctx.config.features.roles as ResolvedRoles
  if (!Array.isArray(roles) || !access.can(roles, { user: ['impersonate' satisfies (typeof adminStatements.user)[number]] })) {
    throw new AdminError('forbidden', "POST /admin/impersonate: the signed-in user's roles do not grant user: ['impersonate'].")
  }
  if (session?.impersonatedBy) throw new AdminError('impersonating', 'POST /admin/impersonate: refused in an impersonation; stop impersonating first.')
  return callerId
}

const MESSAGES: Partial<Record<AdminError['code'], string>> = {
  forbidden: 'You may not impersonate users.',
  impersonating: 'Stop the impersonation you are in first.',
  own_roles: 'You cannot impersonate yourself.',
  not_found: 'There is no such user.',
  banned: 'This user is banned: no session of theirs can start.',
  impersonate_admin: 'This user is an administrator: impersonating administrators is off.',
}

function refusal(ctx: ActionContext, error: AdminError): Promise<AuthResponse> {
  ctx.config.logger.debug('Admin', error.message)
  return impersonationPage(ctx, error.code === 'not_found' ? 404 : 403, MESSAGES[error.code] ?? 'The impersonation was refused.')
}

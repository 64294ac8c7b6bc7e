/**
 * Impersonation: an administrator signs in as a user for a limited time, to see what they see. The
 * session it starts is the user's, marked with the administrator (`session.impersonatedBy`: the
 * session row's column, or the JWT's RFC 8693 `act` claim, both the core's), ending at its own
 * time and never extended. The administrator's own session stays as it was: its cookie waits in
 * `impersonatorSession` and comes back when they stop. The core refuses every change of the user's
 * credentials in such a session (actions/sensitive.ts); the audit log names the administrator.
 */
import type { ActionContext } from '../../actions/context.js'
import { emitEvent } from '../../events.js'
import { readChunkedCookie, writeChunkedCookie, clearChunkedCookie, type OutgoingCookie } from '../../session/cookies.js'
import { endSession, impersonatorOf, signedInUserId, startSession } from '../../session/strategy.js'
import type { AdapterUser } from '../../types.js'
import type { Api } from '../../api/context.js'
import { createGetRoles } from '../roles/api/set-roles.js'
import type { ResolvedRoles } from '../roles/config.js'
import { activeBan } from './api/context.js'
import { adminOf, adminStatements } from './config.js'
import { AdminError } from './errors.js'

/** What a started impersonation answers: its cookies (the user's session, the administrator's kept), and its end. */
export interface StartedImpersonation {
  cookies: OutgoingCookie[]
  user: AdapterUser
  expires: Date
}

/**
 * Starts a session as `userId` for administrator `callerId` (their permission checked by the caller).
 * @param expiresIn Seconds, at most `admin.impersonationMaxAge` (the default).
 * @throws AdminError `own_roles`, `not_found`, `banned`, `impersonate_admin`; TypeError for a bad `expiresIn`
 */
export async function startImpersonation(api: Api, ctx: ActionContext, callerId: string, userId: string, expiresIn: number | undefined): Promise<StartedImpersonation> {
  const { impersonationMaxAge, impersonateAdmins } = adminOf(ctx.config)
  const seconds = expiresIn ?? impersonationMaxAge
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > impersonationMaxAge) {
    throw new TypeError(`impersonateUser(): expiresIn must be a whole number of seconds from 1 to admin.impersonationMaxAge (${impersonationMaxAge}).`)
  }
  if (userId === callerId) throw new AdminError('own_roles', 'impersonateUser(): an administrator does not impersonate themselves.')
  const adapter = ctx.config.adapter!
  const user = await adapter.getUser!(userId)
  if (!user) throw new AdminError('not_found', `impersonateUser(): there is no user ${userId}.`)
  if (activeBan(await adapter.getUserBan!(userId), Date.now())) throw new AdminError('banned', `impersonateUser(): user ${userId} is banned; no session of theirs starts while the ban holds.`)
  if (!impersonateAdmins && isAdministrator(ctx, await createGetRoles(api)(userId))) {
    throw new AdminError('impersonate_admin', `impersonateUser(): user ${userId}'s roles grant admin actions; set admin.impersonateAdmins to impersonate administrators.`)
  }
  const until = ctx.now + seconds
  // The administrator's own session cookie, whole, put back by stopImpersonation.
  const own = readChunkedCookie(ctx.requestCookies, ctx.cookieSet.cookies.sessionToken.name)
  const kept = own ? writeChunkedCookie(ctx.cookieSet.cookies.impersonatorSession, own, { expires: new Date(until * 1000) }, ctx.requestCookies) : []
  const started = await startSession(ctx, user, null, { impersonation: { by: callerId, until } })
  const expires = new Date(until * 1000)
  await emitEvent(ctx.config, 'impersonationStarted', { userId, impersonatedBy: callerId, expiresAt: expires })
  return { cookies: [...kept, ...started], user, expires }
}

/**
 * Ends the request's impersonation: its session goes (as a sign-out does), and the administrator's
 * own session cookie comes back (if it has ended meanwhile, the next read clears it: they sign in).
 * @returns Its cookies, the impersonated user and the administrator.
 * @throws AdminError `not_impersonating`
 */
export async function stopImpersonation(ctx: ActionContext): Promise<{ cookies: OutgoingCookie[]; userId: string; impersonatedBy: string }> {
  const impersonatedBy = await impersonatorOf(ctx)
  const userId = impersonatedBy ? await signedInUserId(ctx) : null
  if (!impersonatedBy || !userId) throw new AdminError('not_impersonating', 'stopImpersonating(): this session is no impersonation.')
  const sessionCookie = ctx.cookieSet.cookies.sessionToken
  const ended = (await endSession(ctx)).filter((cookie) => cookie.name !== sessionCookie.name && !cookie.name.startsWith(`${sessionCookie.name}.`))
  const own = readChunkedCookie(ctx.requestCookies, ctx.cookieSet.cookies.impersonatorSession.name)
  const restored = own
    ? writeChunkedCookie(sessionCookie, own, { expires: new Date((ctx.now + ctx.config.session.maxAge) * 1000) }, ctx.requestCookies)
    : clearChunkedCookie(sessionCookie, ctx.requestCookies)
  await emitEvent(ctx.config, 'impersonationStopped', { userId, impersonatedBy })
  return { cookies: [...ended, ...restored, ...clearChunkedCookie(ctx.cookieSet.cookies.impersonatorSession, ctx.requestCookies)], userId, impersonatedBy }
}

/** Whether `roles` grant any admin action: such a user is impersonated only with `admin.impersonateAdmins`. */
function isAdministrator(ctx: ActionContext, roles: readonly string[]): boolean {
  const { access } = rolesOf(ctx)
  return adminStatements.user.some((action) => access.can(roles, { user: [action] }))
}

// The admin option needs the roles option (config.ts).
const rolesOf = (ctx: ActionContext): ResolvedRoles => ctx.config.features.roles as ResolvedRoles

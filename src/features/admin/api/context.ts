/**
 * What the admin functions share: the request, the caller's permission (the `roles` option's check
 * on the session's roles, no query beyond the session read), the CSRF rule of the ones that change
 * something, and a user's summary (how they sign in, their sessions, the second factor).
 */
import type { ActionContext } from '../../../actions/context.js'
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { UnknownActionError } from '../../../errors.js'
import { listOwnSessions } from '../../../session/devices.js'
import { signedInUserId } from '../../../session/strategy.js'
import type { AdapterUser } from '../../../types.js'
import { sessionGrants } from '../../roles/api/has-permission.js'
import { createGetRoles } from '../../roles/api/set-roles.js'
import { adminStatements } from '../config.js'
import { AdminError } from '../errors.js'
import type { AdminUser, UserBan } from '../types.js'

/** The request, or `{ req, res }`. */
export type AdminCallContext = SessionsCallContext

/** An admin action: `user: [action]` of the admin statements. */
export type AdminAction = (typeof adminStatements.user)[number]

/**
 * The call on `given`, once the caller may do `action`.
 * @param csrf Check the CSRF token (the functions that change something) with these options.
 * @throws TypeError, UnknownActionError (`admin` off), MissingCSRFError, AdminError `not_signed_in`, `forbidden`, `impersonating`
 */
export async function adminCall(api: Api, given: unknown, what: string, action: AdminAction, csrf?: CsrfOptions): Promise<{ ctx: ActionContext; callerId: string }> {
  const { req, res } = givenRequest(given, what)
  if (!api.config.features.admin) throw new UnknownActionError(`${what}: the admin API is off. Set admin: true (with the roles option). See docs/admin.md.`)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  const callerId = await signedInUserId(ctx)
  if (!callerId) throw new AdminError('not_signed_in', `${what}: nobody is signed in on this request.`)
  const session = await api.session(req, res)
  if (!sessionGrants(api, session, { user: [action] })) {
    throw new AdminError('forbidden', `${what}: the signed-in user's roles do not grant user: ['${action}'].`)
  }
  // An impersonation acts as its user, never as an administrator: with admin.impersonateAdmins, the
  // user's roles would lend the administrator powers of theirs.
  if (session?.impersonatedBy) throw new AdminError('impersonating', `${what}: refused in an impersonation; stop impersonating first.`)
  return { ctx, callerId }
}

/** `user` as the admin API shows them. */
export async function adminUser(api: Api, ctx: ActionContext, user: AdapterUser): Promise<AdminUser> {
  const { adapter } = api.config
  const accounts = (await adapter!.getAccountsByUserId?.(user.id)) ?? []
  const hasPassword = typeof adapter!.getUserPassword === 'function' && (await adapter!.getUserPassword(user.id)) !== null
  const twoFactor = typeof adapter!.getTwoFactor === 'function' && (await adapter!.getTwoFactor(user.id))?.enabledAt != null
  return {
    id: user.id,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.emailVerified ?? null,
    roles: await createGetRoles(api)(user.id),
    signInMethods: [...new Set([...accounts.map((account) => account.provider), ...(hasPassword ? ['password'] : [])])].sort(),
    sessions: await sessionCount(api, ctx, user.id),
    twoFactor,
    ban: activeBan(await adapter!.getUserBan?.(user.id), Date.now()),
  }
}

/** The user's unexpired sessions; null when they cannot be counted (JWT sessions without `session.store`). */
async function sessionCount(api: Api, ctx: ActionContext, userId: string): Promise<number | null> {
  return sessionsRecorded(api) ? (await listOwnSessions(ctx, { userId, sessionId: undefined })).length : null
}

/** Whether a user's sessions can be listed: database sessions (an adapter that lists them), or JWT sessions with `session.store`. */
export function sessionsRecorded({ config }: Api): boolean {
  if (config.session.strategy === 'jwt') return config.session.store !== undefined
  return typeof config.adapter?.listSessionsByUserId === 'function'
}

/** `ban` while it holds at `now`: an expired one lifts itself (it is read as none). */
export function activeBan(ban: UserBan | null | undefined, now: number): UserBan | null {
  return ban && (ban.expiresAt === null || ban.expiresAt.getTime() > now) ? ban : null
}

/**
 * What the admin pages' routes share: the request as the admin functions take it (so each route
 * calls the admin API, and the permission is checked there, once), the answers to a visitor and to
 * a caller without the permission, one user's page with a message, and what an action's refusal shows.
 */
import { assertCsrf, authUrl, issueCsrf, pageUrl, stringValue, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { acceptsHtml } from '../../../api/middleware.js'
import { givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import { compositionOf } from '../../../composition/index.js'
import { InvalidRequestError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { createGetUserDetails } from '../api/get-user-details.js'
import { createListUserSessions } from '../api/list-user-sessions.js'
import type { AdminAction, AdminCallContext } from '../api/context.js'
import { sessionGrants } from '../../roles/api/has-permission.js'
import { AdminError } from '../errors.js'
import type { AdminUser } from '../types.js'
import { apiOf } from '../instance.js'
import { renderAdminMessagePage } from '../pages/layout.js'
import { renderAdminUserPage } from '../pages/user.js'
import { userAudit } from './audit.js'

/** The instance's API state, and the request as the admin functions take it (with the response, for a re-issued session cookie). */
export function adminRequest(ctx: ActionContext): { api: Api; call: AdminCallContext } {
  const api = apiOf(ctx.config)
  return { api, call: api.requestScope.getStore() ?? ctx.req }
}

/** The URL of one user's page, with a notice's key. */
export function userPageUrl(ctx: ActionContext, userId: string, notice?: string): string {
  return `${authUrl(ctx, '/admin/user')}?${new URLSearchParams({ id: userId, ...(notice && { notice }) })}`
}

/**
 * The answer to an AdminError `not_signed_in` (to the sign-in page, and back to `back`; a 401 for a
 * script that does not ask for HTML, as `requirePermission` answers) or `forbidden` (a themed 403
 * page); undefined for any other error.
 */
export function refusedCaller(ctx: ActionContext, error: unknown, back: string): AuthResponse | undefined {
  if (!(error instanceof AdminError)) return undefined
  if (error.code === 'not_signed_in') {
    const signInUrl = pageUrl(ctx, 'signIn', '/signin', { callbackUrl: back })
    if (!acceptsHtml(ctx.req)) return { status: 401, json: { error: 'SessionRequired', message: 'Sign in to use the admin pages.', signInUrl, url: signInUrl } }
    return { redirect: signInUrl }
  }
  if (error.code === 'forbidden') return messagePage(ctx, 403, 'Access denied', 'Your account may not do this on the admin pages: its roles do not grant it.')
  return undefined
}

/** A themed page saying why there is nothing to show. */
export function messagePage(ctx: ActionContext, status: number, heading: string, message: string, link?: { href: string; text: string }): AuthResponse {
  return { status, html: renderAdminMessagePage({ heading, message, link, theme: ctx.config.theme, homeUrl: homeUrl(ctx) }), headers: { 'Cache-Control': 'no-store' } }
}

/** What the user page says after an action (`?notice=`): fixed texts, so no link can make it say anything else. */
export const NOTICES: Readonly<Record<string, string>> = Object.freeze({
  updated: 'Name and address saved.',
  roles: 'Roles saved.',
  sessions: 'Every session of the user was ended.',
  banned: 'The user is banned: their sessions were ended, and every sign-in is refused.',
  unbanned: 'The ban is lifted. The user can sign in again.',
  'two-factor': 'The second factor was removed. The user can set it up again.',
  'reset-link': 'A password reset link was mailed to the user.',
  deleted: 'The user was deleted.',
})

/**
 * One user's page (`getUserDetails`: the caller needs `user: ['list']`), with a message, or the
 * page for a visitor, a caller without the permission, or no such user.
 */
export async function userPage(ctx: ActionContext, userId: string, status: number, messages: { error?: string; notice?: string } = {}): Promise<AuthResponse> {
  const { api, call } = adminRequest(ctx)
  let user: AdminUser | null
  try {
    user = await createGetUserDetails(api)(call, userId)
  } catch (error) {
    const refused = refusedCaller(ctx, error, userPageUrl(ctx, userId))
    if (refused) return refused
    throw error
  }
  if (!user) return messagePage(ctx, 404, 'No such user', 'There is no user with this id: they may have been deleted.', { href: `${ctx.basePath}/admin`, text: 'All users' })
  const csrf = issueCsrf(ctx)
  const on = new Set(compositionOf(ctx.config).enabled.map((feature) => feature.name))
  const may = await callerMay(api, call)
  const html = renderAdminUserPage({
    basePath: ctx.basePath,
    csrfToken: csrf.token,
    user,
    roleNames: (ctx.config.features.roles as { access: { roleNames: readonly string[] } }).access.roleNames,
    offers: {
      update: may('update'),
      setRoles: may('set-role'),
      endSessions: may('revoke-sessions') && user.sessions !== null,
      ban: may('ban'),
      resetTwoFactor: may('reset-two-factor') && on.has('two-factor'),
      resetLink: may('send-reset-link') && on.has('password'),
      delete: may('delete') && on.has('account'),
      impersonate: may('impersonate'),
    },
    sessions: user.sessions ? ((await createListUserSessions(api)(call, userId)) ?? undefined) : undefined,
    audit: on.has('audit') ? await userAudit(api, call, userId) : undefined,
    ...messages,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store' } }
}

/**
 * Which admin actions the caller's roles grant, from the session the admin function read: the page
 * shows only their forms (each action's function checks again, and alone decides).
 */
async function callerMay(api: Api, call: AdminCallContext): Promise<(action: AdminAction) => boolean> {
  const { req, res } = givenRequest(call, 'the admin page')
  const session = await api.session(req, res)
  return (action) => sessionGrants(api, session, { user: [action] })
}

/**
 * What an action's refusal shows: the visitor's and the forbidden caller's answers, no such user,
 * the user's page with what was wrong (403 for a caller whose roles do not grant the action; 400
 * for another AdminError, or for a field the admin function refused, which `invalid` words for
 * people); anything else is rethrown.
 */
export async function actionRefusal(ctx: ActionContext, userId: string, error: unknown, invalid: string): Promise<AuthResponse> {
  if (error instanceof AdminError && error.code === 'forbidden') return userPage(ctx, userId, 403, { error: 'Your roles do not grant this action.' })
  const refused = refusedCaller(ctx, error, userPageUrl(ctx, userId))
  if (refused) return refused
  if (error instanceof AdminError) {
    if (error.code === 'not_found') return userPage(ctx, userId, 404)
    return userPage(ctx, userId, 400, { error: REFUSALS[error.code] ?? invalid })
  }
  if (isArgumentRefusal(error)) {
    ctx.config.logger.debug('AdminFormRefused', error.message)
    return userPage(ctx, userId, 400, { error: invalid })
  }
  throw error
}

/**
 * A server-side function's refusal of an argument (a field of the form): a TypeError whose message
 * names the function, `banUser(): reason must be …`. Any other TypeError is a bug, and stays one.
 */
function isArgumentRefusal(error: unknown): error is TypeError {
  return error instanceof TypeError && /^\w+\(/.test(error.message)
}

const REFUSALS: Partial<Record<AdminError['code'], string>> = {
  own_roles: 'Nobody does this to their own account here: another administrator must.',
  email_taken: 'Another user has that address.',
  no_address: 'The user has no e-mail address to mail the link to.',
  mail_failed: 'The link could not be mailed. The server log says why.',
  banned: 'The user is banned: no session of theirs can start, an impersonation neither.',
  impersonate_admin: 'This user is an administrator: impersonating administrators is off (admin.impersonateAdmins).',
  impersonating: 'You are impersonating someone: stop that first.',
}

/**
 * A POST action on the posted user (`id`): the CSRF check first, then `run` (an admin function,
 * which checks the caller's permission and the token again), then back to the user's page with
 * `notice` (or the one `run` returns), or the refusal's page (`invalid`: what a refused field means).
 */
export async function userAction(
  ctx: ActionContext,
  action: string,
  run: (api: Api, call: AdminCallContext, userId: string, csrf: CsrfOptions) => Promise<string | void>,
  done: { notice: string; invalid: string },
): Promise<AuthResponse> {
  assertCsrf(ctx)
  const userId = postedUserId(ctx, action)
  const { api, call } = adminRequest(ctx)
  let notice: string | void
  try {
    notice = await run(api, call, userId, { csrfToken: stringValue(ctx.body.csrfToken) })
  } catch (error) {
    return actionRefusal(ctx, userId, error, done.invalid)
  }
  return { redirect: userPageUrl(ctx, userId, notice ?? done.notice) }
}

/** The posted user id. @throws InvalidRequestError when there is none. */
export function postedUserId(ctx: ActionContext, action: string): string {
  const id = stringValue(ctx.body.id)
  if (id === undefined || id.length > 255) throw new InvalidRequestError(`POST ${ctx.basePath}/admin/user/${action} needs the user's id (id).`)
  return id
}

/**
 * What the organizations' routes share: the caller signed in by a cookie session (an API key or an
 * access token cannot manage organizations), the answers for JSON clients and for browsers (the
 * page again with the refusal's message, or a redirect back to the page after a form succeeds), the
 * two pages, and the posted fields of a form or a JSON body.
 */
import { authUrl, issueCsrf, pageUrl, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { answersJson } from '../../../http/request.js'
import type { AuthResponse } from '../../../http/respond.js'
import type { OutgoingCookie } from '../../../session/cookies.js'
import { readSession } from '../../../session/strategy.js'
import { loadManage } from '../api/context.js'
import { callerOf, membershipOf, type Caller } from '../call.js'
import { OrganizationError, statusOf } from '../errors.js'
import { renderMembersPage } from '../pages/members.js'
import { renderOrganizationsPage } from '../pages/organizations.js'
import { invitationShape, membershipShape } from '../shapes.js'
import { activeOrganizationOf } from '../session-field.js'

/** What a page shows besides its records: a refusal's message and status, and cookies to send with it. */
export interface PageExtras {
  error?: string | undefined
  status?: number | undefined
  cookies?: readonly OutgoingCookie[] | undefined
}

// The pages show what only this user may see: never kept by a cache or the browser's history.
const NO_STORE = { 'Cache-Control': 'no-store' } as const

/** Whether the request wants JSON (fetch with `Accept: application/json`, or a JSON body), as the API keys' routes decide it. */
export function jsonClient(ctx: ActionContext): boolean {
  return answersJson(ctx.req)
}

/**
 * The signed-in caller, or the answer for a visitor who is not: 401 JSON, or the sign-in page
 * coming back to `back` (a path of the router, e.g. `/organizations`).
 */
export async function callerOrSignIn(ctx: ActionContext, back: string): Promise<{ caller: Caller } | { response: AuthResponse }> {
  try {
    return { caller: await callerOf(ctx, `${ctx.method} ${back}`) }
  } catch (error) {
    if (!(error instanceof OrganizationError) || error.code !== 'not_signed_in') throw error
  }
  if (jsonClient(ctx)) return { response: { status: 401, json: { error: 'Organization', code: 'not_signed_in', message: 'Sign in to manage organizations (a cookie session: an API key cannot manage them).' }, headers: NO_STORE } }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, back) }) } }
}

/** A JSON answer that is never cached. */
export function jsonAnswer(json: unknown, extra: { status?: number; cookies?: readonly OutgoingCookie[] } = {}): AuthResponse {
  return { status: extra.status, json, headers: NO_STORE, cookies: extra.cookies ? [...extra.cookies] : undefined }
}

/** A browser's form succeeded: back to the page (`path` of the router), with the call's cookies. */
export function backTo(ctx: ActionContext, path: string, cookies: readonly OutgoingCookie[] = []): AuthResponse {
  return { redirect: authUrl(ctx, path), cookies: [...cookies] }
}

/** The members page's path for an organization. */
export function membersPath(organizationId: string): string {
  return `/organizations/members?organizationId=${encodeURIComponent(organizationId)}`
}

/** The session's active organization's id (and the cookies its read sends back, if any). */
export async function activeOrganizationIdOf(ctx: ActionContext): Promise<{ id: string | null; cookies: OutgoingCookie[] }> {
  const { session, cookies } = await readSession(ctx)
  return { id: activeOrganizationOf(session?.user?.activeOrganization)?.id ?? null, cookies }
}

/** The page of the caller's organizations, with its switcher and its "create" form. */
export async function organizationsPage(ctx: ActionContext, caller: Caller, extra: PageExtras = {}): Promise<AuthResponse> {
  const organizations = await (await loadManage()).listOrganizations(caller)
  const active = await activeOrganizationIdOf(ctx)
  const csrf = issueCsrf(ctx)
  const html = renderOrganizationsPage({
    organizations,
    // The session may still name one the user has left (a JWT session without a store): only one of theirs is marked.
    activeOrganizationId: organizations.some((organization) => organization.id === active.id) ? active.id : null,
    error: extra.error,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status: extra.status, html, cookies: [...(extra.cookies ?? []), ...active.cookies, ...csrf.cookies], headers: NO_STORE }
}

/**
 * The members page of one of the caller's organizations. The viewer's roles are read fresh from the
 * database (never from the session, whose roles may be as of a switch) to pick the forms it shows.
 * @throws OrganizationError `not_found`, `forbidden`, `invalid_input` (answered by `refusal`)
 */
export async function membersPage(ctx: ActionContext, caller: Caller, organizationId: unknown, extra: PageExtras = {}): Promise<AuthResponse> {
  const manage = await loadManage()
  const { organization, member } = await membershipOf(caller, organizationId)
  const members = await manage.listMembers(caller, organization.id)
  const can = (permissions: Parameters<Caller['options']['access']['can']>[1]): boolean => caller.options.access.can(member.roles, permissions)
  const invitations = can({ invitation: ['list'] }) ? (await caller.adapter.listInvitations(organization.id)).map(invitationShape) : undefined
  const csrf = issueCsrf(ctx)
  const html = renderMembersPage({
    organization: membershipShape(organization, member),
    members,
    invitations,
    pageUrl: authUrl(ctx, membersPath(organization.id)),
    viewerId: caller.userId,
    roleNames: caller.options.roleNames,
    grants: {
      updateRole: can({ member: ['update-role'] }),
      remove: can({ member: ['remove'] }),
      update: can({ organization: ['update'] }),
      delete: can({ organization: ['delete'] }),
      invite: can({ invitation: ['create'] }),
      cancelInvitation: can({ invitation: ['cancel'] }),
    },
    error: extra.error,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status: extra.status, html, cookies: [...(extra.cookies ?? []), ...csrf.cookies], headers: NO_STORE }
}

/**
 * An OrganizationError as JSON clients and browsers see it: `{ error, code, message }` with its
 * status, or the page again with the message (the members page of `organizationId` when given and
 * still the caller's to see, else the organizations page). Anything else is rethrown.
 */
export async function refusal(ctx: ActionContext, caller: Caller, error: unknown, organizationId?: unknown): Promise<AuthResponse> {
  if (!(error instanceof OrganizationError)) throw error
  const status = statusOf(error.code)
  if (jsonClient(ctx)) return jsonAnswer({ error: error.type, code: error.code, message: error.message }, { status })
  if (organizationId !== undefined && error.code !== 'not_found') {
    try {
      return await membersPage(ctx, caller, organizationId, { error: error.message, status })
    } catch (again) {
      if (!(again instanceof OrganizationError)) throw again
    }
  }
  return organizationsPage(ctx, caller, { error: error.message, status })
}

/** A posted field as it came: a form's string, or a JSON body's value of any type (the engine checks it). */
export function posted(ctx: ActionContext, name: string): unknown {
  return (ctx.body as Record<string, unknown>)[name]
}

/**
 * A posted optional text: a form's empty field is "not given" (undefined), or `empty` when an
 * empty field means something (a logo cleared: null). A JSON body's value is passed as it is.
 */
export function optionalField(ctx: ActionContext, name: string, empty: null | undefined = undefined): unknown {
  const value = posted(ctx, name)
  return value === '' && !jsonClient(ctx) ? empty : value
}

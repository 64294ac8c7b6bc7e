/**
 * What the invitations' routes share: the user signed in by a cookie session (or the answer for a
 * visitor who is not), the caller of the engine, the answers for JSON clients and browsers, and the
 * posted fields of a form or a JSON body.
 */
import { pageUrl, redirectTarget, stringValue, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { jsonClient } from './organization-shared.js'
import type { AuthResponse } from '../../../http/respond.js'
import { signedInUserId } from '../../../session/strategy.js'
import { loadInvitations } from '../api/context.js'
import { optionsOf, organizationAdapter, type Caller } from '../call.js'
import { OrganizationError, statusOf } from '../errors.js'
import { renderInvitationNotice } from '../pages/invitation.js'

export { jsonClient } from './organization-shared.js'

/**
 * The engine and the signed-in caller, or the answer for a visitor who is not: 401 JSON, or the
 * sign-in page (the app's, or the built-in one, where any configured method signs in or up) coming
 * back to `returnTo`.
 */
export async function callerOrSignIn(ctx: ActionContext, returnTo: string): Promise<{ caller: Caller; engine: Awaited<ReturnType<typeof loadInvitations>> } | { response: AuthResponse }> {
  const options = optionsOf(ctx.config, 'The invitation routes')
  const userId = await signedInUserId(ctx)
  if (!userId) {
    if (jsonClient(ctx)) return { response: { status: 401, json: { error: 'Organization', code: 'not_signed_in', message: 'Sign in first (a cookie session).' } } }
    return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: returnTo }) } }
  }
  return { caller: { ctx, userId, options, adapter: organizationAdapter(ctx.config) }, engine: await loadInvitations() }
}

/** An OrganizationError as JSON clients (`{ error, code, message }`, its status, `Retry-After`) and browsers (a notice) see it; anything else is rethrown. */
export function refusal(ctx: ActionContext, error: unknown, answer: { json?: boolean } = {}): AuthResponse {
  if (!(error instanceof OrganizationError)) throw error
  const status = statusOf(error.code)
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' }
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds)
  if (answer.json || jsonClient(ctx)) return { status, headers, json: { error: error.type, code: error.code, message: error.message } }
  const heading = error.code === 'invalid_invitation' ? 'Invitation not valid' : 'Invitation not changed'
  return { status, headers, html: renderInvitationNotice({ heading, message: error.message, ...pageBase(ctx) }) }
}

/** What every invitation page takes from the request. */
export function pageBase(ctx: ActionContext): { basePath: string; theme: ActionContext['config']['theme']; homeUrl: string } {
  return { basePath: ctx.basePath, theme: ctx.config.theme, homeUrl: homeUrl(ctx) }
}

/** A posted field (or, for a GET, a query parameter) as a string, or undefined. */
export function field(ctx: ActionContext, name: string): string | undefined {
  return stringValue((ctx.body as Record<string, unknown>)[name]) ?? (ctx.method === 'GET' ? (ctx.query.get(name) ?? undefined) : undefined)
}

/** Where a browser goes after a form: the posted `callbackUrl` (through the `redirect` callback), else the app's home. */
export async function backTo(ctx: ActionContext): Promise<string> {
  const callbackUrl = field(ctx, 'callbackUrl')
  return callbackUrl ? redirectTarget(ctx, callbackUrl) : homeUrl(ctx)
}

/**
 * What the API keys' routes share: the user signed in by a cookie session (a key cannot manage keys),
 * the answers for JSON clients and browsers, and reading the posted fields of a form or a JSON body.
 */
import { authUrl, issueCsrf, pageUrl, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { answersJson } from '../../../http/request.js'
import type { AuthResponse } from '../../../http/respond.js'
import { signedInUserId } from '../../../session/strategy.js'
import { keyOwner, loadManage } from '../api/context.js'
import { apiKeysOf } from '../config.js'
import { ApiKeyError } from '../errors.js'
import { renderApiKeysPage } from '../pages/api-keys.js'
import { userOwner } from '../owner.js'
import type { ApiKeyOwner, CreatedApiKey } from '../types.js'

/** Whether the request wants JSON (fetch with `Accept: application/json`, or a JSON body). */
export function jsonClient(ctx: ActionContext): boolean {
  return answersJson(ctx.req)
}

/** The signed-in user's id, or the answer for a visitor who is not (401 JSON, or the sign-in page with a way back). */
export async function userOrSignIn(ctx: ActionContext): Promise<{ userId: string } | { response: AuthResponse }> {
  const userId = await signedInUserId(ctx)
  if (userId) return { userId }
  if (jsonClient(ctx)) return { response: { status: 401, json: { error: 'Unauthorized', message: 'Sign in to manage API keys (a cookie session: an API key cannot manage keys).' } } }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/api-keys') }) } }
}

/**
 * The owner of the keys a request manages: the user's own, or the organization named by the posted
 * (or, on GET, queried) `organizationId` when they may manage its keys.
 * @throws ApiKeyError `invalid_input`, `not_found`
 */
export async function requestOwner(ctx: ActionContext, userId: string): Promise<ApiKeyOwner> {
  const posted = (ctx.body as Record<string, unknown>).organizationId
  return keyOwner(ctx.config, userId, posted ?? ctx.query.get('organizationId') ?? undefined)
}

/** The page with the user's keys, and, once, a key just made. */
export async function keysPage(ctx: ActionContext, userId: string, extra: { created?: CreatedApiKey; error?: string; status?: number } = {}): Promise<AuthResponse> {
  const keys = await (await loadManage()).listKeys(ctx.config, userOwner(userId))
  const csrf = issueCsrf(ctx)
  const html = renderApiKeysPage({
    keys,
    created: extra.created,
    error: extra.error,
    scopes: apiKeysOf(ctx.config)!.scopes,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  // A page that shows a key is never stored by a cache or the browser's history.
  return { status: extra.status, html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store' } }
}

/** An ApiKeyError as JSON clients and browsers see it; anything else is rethrown. */
export async function refusal(ctx: ActionContext, userId: string, error: unknown): Promise<AuthResponse> {
  if (!(error instanceof ApiKeyError)) throw error
  const status = error.code === 'not_found' ? 404 : error.code === 'too_many_keys' ? 409 : 400
  if (jsonClient(ctx)) return { status, json: { error: error.type, code: error.code, message: error.message } }
  return keysPage(ctx, userId, { error: error.message, status })
}

/** A posted field as a string, or undefined. */
export function field(ctx: ActionContext, name: string): string | undefined {
  const value = (ctx.body as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : undefined
}

/** A posted whole number: a JSON number, or a form's digits; `''` and absent are undefined. */
export function numberField(ctx: ActionContext, name: string): unknown {
  const value = (ctx.body as Record<string, unknown>)[name]
  if (value === undefined || value === '') return undefined
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value
}

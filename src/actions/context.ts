/**
 * What every route action receives: the request reduced to plain values, plus the resolved config.
 * Actions return an `AuthResponse`; they never touch Node's `res`.
 */
import { MissingCSRFError } from '../errors.js'
import type { RequestBody } from '../http/body.js'
import type { NodeRequest } from '../http/request.js'
import type { AuthResponse } from '../http/respond.js'
import { csrfState, sameOriginRequest, verifyCsrf } from '../security/csrf.js'
import type { OutgoingCookie } from '../session/cookies.js'
import type { SessionRequest } from '../session/types.js'
import type { PagesOptions } from '../types.js'

/** One request to the router. */
export interface ActionContext extends SessionRequest {
  /** The Node request, for `authorize(credentials, req)` and the callbacks. */
  readonly req: NodeRequest
  readonly method: 'GET' | 'POST'
  /** The site's origin, e.g. `https://example.com`. */
  readonly origin: string
  /** Where the router is mounted, e.g. `/api/auth`. */
  readonly basePath: string
  readonly query: URLSearchParams
  readonly body: RequestBody
}

/** A route action. */
export type Action = (ctx: ActionContext) => Promise<AuthResponse>

/** Absolute URL of a route of the router, e.g. `authUrl(ctx, '/signin')`. */
export function authUrl(ctx: Pick<ActionContext, 'origin' | 'basePath'>, path: string): string {
  return `${ctx.origin}${ctx.basePath}${path}`
}

/** The path of a route of the router, e.g. `/api/auth/signup` (a form's action). */
export function actionPath(ctx: ActionContext, path: string): string {
  return new URL(authUrl(ctx, path)).pathname
}

/**
 * Absolute URL of a page: the app's own (`pages[page]`) when configured, else the built-in one at
 * `builtInPath`, with `params` as its query.
 */
export function pageUrl(
  ctx: Pick<ActionContext, 'origin' | 'basePath' | 'config'>,
  page: keyof PagesOptions,
  builtInPath: string,
  params?: Record<string, string | undefined>,
): string {
  const url = new URL(ctx.config.pages[page] ?? `${ctx.basePath}${builtInPath}`, `${ctx.origin}/`)
  for (const [key, value] of Object.entries(params ?? {})) if (value !== undefined) url.searchParams.set(key, value)
  return url.href
}

/** The CSRF token for a page or `GET /csrf`, and the cookie to set when it is new. */
export function issueCsrf(ctx: ActionContext): { token: string; cookies: OutgoingCookie[] } {
  const cookie = ctx.cookieSet.cookies.csrfToken
  const state = csrfState(ctx.requestCookies[cookie.name], ctx.config.secrets)
  const cookies = state.newCookieValue ? [{ name: cookie.name, value: state.newCookieValue, options: cookie.options }] : []
  return { token: state.token, cookies }
}

/**
 * True when the request comes from the site itself (`Sec-Fetch-Site`/`Origin`, when the browser
 * sends them) and the body's `csrfToken` matches a valid CSRF cookie.
 */
export function csrfVerified(ctx: ActionContext): boolean {
  const cookie = ctx.requestCookies[ctx.cookieSet.cookies.csrfToken.name]
  return sameOriginRequest(ctx.req.headers, ctx.origin) && verifyCsrf(cookie, ctx.body.csrfToken, ctx.config.secrets)
}

/** @throws MissingCSRFError unless the body's `csrfToken` matches a valid CSRF cookie. */
export function assertCsrf(ctx: ActionContext): void {
  if (!csrfVerified(ctx)) throw new MissingCSRFError()
}

/**
 * Where to send the user when the flow ends: the request's `callbackUrl` (body, then query), else
 * the callback-url cookie, passed through the `redirect` callback; the site's root by default.
 * Returns the cookie that remembers it across a provider round trip when it changed.
 */
export async function resolveCallbackUrl(ctx: ActionContext): Promise<{ url: string; cookies: OutgoingCookie[] }> {
  const cookie = ctx.cookieSet.cookies.callbackUrl
  const fromCookie = ctx.requestCookies[cookie.name]
  const fromRequest = stringValue(ctx.body.callbackUrl) ?? ctx.query.get('callbackUrl') ?? undefined
  const candidate = fromRequest ?? fromCookie
  if (candidate === undefined) return { url: `${ctx.origin}/`, cookies: [] }
  const url = await redirectTarget(ctx, candidate)
  return { url, cookies: url === fromCookie ? [] : [{ name: cookie.name, value: url, options: cookie.options }] }
}

/** `candidate` after the `redirect` callback, as an absolute URL (the site's root if the callback returned garbage). */
export async function redirectTarget(ctx: Pick<ActionContext, 'config' | 'origin'>, candidate: string): Promise<string> {
  const chosen = await ctx.config.callbacks.redirect({ url: candidate, baseUrl: ctx.origin })
  try {
    return new URL(chosen, `${ctx.origin}/`).href
  } catch {
    return `${ctx.origin}/`
  }
}

/** A form or JSON field as a string, if it is one. */
export function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/** A posted list: a JSON body's value as it came (the caller checks it), or a form's text of names separated by spaces or commas. */
export function postedList(ctx: Pick<ActionContext, 'body'>, name: string): unknown {
  const value = (ctx.body as Record<string, unknown>)[name]
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean)
  return value
}

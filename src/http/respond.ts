/**
 * Writes a plain `AuthResponse` to a Node response. The only code besides request.ts that touches
 * Node's `res`; it decides nothing about authentication.
 */
import type { ServerResponse } from 'node:http'
import { stringifySetCookie } from 'cookie'
import type { ClientErrorCode } from '../errors.js'
import type { OutgoingCookie } from '../session/cookies.js'
import { wantsJson, type NodeRequest } from './request.js'

/** What an action answers: a redirect, JSON or an HTML page, plus cookies and headers. */
export interface AuthResponse {
  status?: number
  headers?: Record<string, string>
  cookies?: OutgoingCookie[]
  /**
   * Absolute URL to redirect to (302, or `{ url }` JSON for `X-Auth-Return-Redirect: 1`). With `html`
   * as well, browsers get the page (with `status`) instead of the redirect, and JSON clients the URL.
   */
  redirect?: string
  /**
   * The failure the redirect reports (its `?error=` and `?code=`), added to the JSON answer so a
   * client need not parse `url`. Given explicitly, never read back from the URL: a `callbackUrl`
   * such as `/page?error=x` is a success.
   */
  failure?: AuthFailure
  /**
   * With `failure`: the status a request that asked for JSON (`Accept: application/json`, a JSON
   * body) gets with the failure as JSON, instead of the redirect a browser follows.
   */
  failureStatus?: number
  json?: unknown
  html?: string
  /**
   * With `html`: the absolute URL of the one script the page loads (the passkey script). The page's
   * CSP then allows that script and same-origin `fetch`, and nothing else.
   */
  pageScript?: string
  /** A static asset (the passkey script): sent as is, with `headers` giving its type and caching. */
  text?: string
}

/** A failed flow as a JSON client sees it: `{ url, error, code, message }`, `message` saying what to do. */
export type AuthFailure = { error: ClientErrorCode; code?: string; message?: string }

// Pages of the router may not be framed (clickjacking on the sign-in and sign-out forms) and load
// nothing but their inline styles and the theme logo (an http(s) URL or a path, see theme.ts): no
// scripts even if escaping ever failed. form-action stays open on purpose: browsers apply it to the
// redirect after a sign-in POST, which goes to an OAuth provider's origin. `data:` images are the
// pages' empty icon (`<link rel="icon" href="data:,">`, so that no page asks the app for a
// /favicon.ico it may not serve); an image runs no script.
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: http: data:; frame-ancestors 'none'; base-uri 'none'"
const PAGE_SECURITY_HEADERS = {
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
} as const

/**
 * The CSP of a page. A page with the passkey script may load that one file (a source with its full
 * path, not 'self': no other script of the site) and fetch from its own origin (the passkey options);
 * still no inline script, so an injection that escaped escaping runs nothing.
 */
function pageCsp(pageScript: string | undefined): string {
  if (pageScript === undefined || !/^https?:\/\/[^\s;,']+$/.test(pageScript)) return PAGE_CSP
  return `${PAGE_CSP}; script-src ${pageScript}; connect-src 'self'`
}

/** Adds `Set-Cookie` headers, keeping any the app already set. */
export function appendCookies(res: ServerResponse, cookies: readonly OutgoingCookie[]): void {
  appendSetCookieHeaders(
    res,
    cookies.map(({ name, value, options }) => stringifySetCookie({ name, value, ...options })),
  )
}

function appendSetCookieHeaders(res: ServerResponse, headers: readonly string[]): void {
  if (headers.length === 0) return
  const existing = res.getHeader('Set-Cookie')
  const previous = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)]
  res.setHeader('Set-Cookie', [...previous, ...headers])
}

/** Sends `response` and ends `res`. */
export function sendResponse(req: NodeRequest, res: ServerResponse, response: AuthResponse): void {
  if (res.headersSent) {
    res.end()
    return
  }
  appendCookies(res, response.cookies ?? [])
  res.setHeader('Cache-Control', 'private, no-cache, no-store, max-age=0')
  for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value)
  // A body we stopped reading (too large) is not drained: close the connection after answering.
  if (!req.readableEnded && req.isPaused()) res.setHeader('Connection', 'close')

  if (response.redirect !== undefined) {
    // 200 even for a failure (429 for a refused attempt): Auth.js's client reads `url` (and `error`) from any answer it gets.
    if (req.headers['x-auth-return-redirect'] === '1') return sendJson(res, response.status ?? 200, { url: response.redirect, ...response.failure })
    // A fetch that follows the redirect would get the sign-in page's HTML: a client that asked for JSON gets the failure.
    if (response.failure !== undefined && asksForJson(req)) return sendJson(res, response.failureStatus ?? response.status ?? 400, { ...response.failure, url: response.redirect })
    if (response.html === undefined) {
      res.statusCode = response.status ?? 302
      res.setHeader('Location', response.redirect)
      res.end()
      return
    }
  }
  if (response.html !== undefined) {
    res.setHeader('Content-Security-Policy', pageCsp(response.pageScript))
    // A page's own headers, set above, win (the reset page's stricter Referrer-Policy).
    for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) if (response.headers?.[name] === undefined) res.setHeader(name, value)
    res.statusCode = response.status ?? 200
    res.setHeader('Content-Type', 'text/html; charset=utf-8')
    res.end(response.html)
    return
  }
  if (response.text !== undefined) {
    res.statusCode = response.status ?? 200
    res.setHeader('X-Content-Type-Options', 'nosniff')
    if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'text/plain; charset=utf-8')
    res.end(response.text)
    return
  }
  sendJson(res, response.status ?? 200, response.json ?? null)
}

/** `Accept` prefers JSON to HTML, or the body is JSON (`application/json`, `application/*+json`). */
function asksForJson(req: NodeRequest): boolean {
  const type = req.headers['content-type']
  return wantsJson(req) || (typeof type === 'string' && /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(type))
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.end(JSON.stringify(body))
}

/** Sends a WHATWG `Response` (as the `authorized` callback may return) through a Node response. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value)
  })
  appendSetCookieHeaders(res, response.headers.getSetCookie())
  res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined)
}

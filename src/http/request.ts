/**
 * Reads what Portcullis needs from a Node request (Express 4/5, Connect, or plain `node:http`):
 * the site's origin, whether to use secure cookies, and the cookies. Nothing here decides anything
 * about authentication.
 */
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { parseCookie } from 'cookie'
import type { CookieSet, ResolvedConfig } from '../config/types.js'
import { InvalidRequestError, UntrustedHostError } from '../errors.js'
import type { SessionRequest } from '../session/types.js'
import { nowInSeconds } from '../session/token.js'

/** A Node request as Express and Connect extend it. */
export type NodeRequest = IncomingMessage & {
  originalUrl?: string
  baseUrl?: string
  body?: unknown
  cookies?: Record<string, string>
  app?: { get?: (setting: string) => unknown }
}

type TrustProxy = (address: string | undefined, hop: number) => boolean

/**
 * The request's cookies, parsed from the header. Not `cookie-parser`'s `req.cookies`: it turns
 * `j:`-prefixed values into objects, and every value here must be the string the browser sent.
 */
export function readCookies(req: NodeRequest): Record<string, string | undefined> {
  const header = req.headers.cookie
  return header ? parseCookie(header) : {}
}

/** What reading or writing this request's session needs: its cookie flavour, its cookies, the time. */
export function sessionRequestFor(req: NodeRequest, config: ResolvedConfig): SessionRequest {
  return { config, cookieSet: cookieSetFor(req, config), requestCookies: readCookies(req), now: nowInSeconds(), req }
}

/** The cookie names and session keys this request uses: secure ones on HTTPS (or as configured). */
export function cookieSetFor(req: NodeRequest, config: ResolvedConfig): CookieSet {
  const secure = config.useSecureCookies ?? (config.url ? config.url.protocol === 'https:' : requestProtocol(req, config) === 'https')
  return secure ? config.cookieSets.secure : config.cookieSets.insecure
}

/**
 * The site's origin, e.g. `https://example.com`.
 * - `AUTH_URL` set: its origin, whatever the request says.
 * - `trustHost: true`: `X-Forwarded-Proto`/`X-Forwarded-Host` when present, else the Host header.
 * - default, in production: refused. The Host header is the client's to choose, and an origin taken
 *   from it poisons every redirect and link (and, behind a cache, every user's).
 * - default, in development: the Host header (with one warning); forwarded headers only from a
 *   proxy Express trusts (`trust proxy`).
 *
 * @throws UntrustedHostError in production without `AUTH_URL` or `trustHost: true`.
 * @throws InvalidRequestError when the Host header is missing or malformed.
 */
export function requestOrigin(req: NodeRequest, config: ResolvedConfig): string {
  if (config.url) return config.url.origin
  if (config.trustHost !== true) untrustedHost(config)
  const forwarded = forwardedHeadersTrusted(req, config)
  const host = (forwarded && firstValue(req.headers['x-forwarded-host'])) || req.headers.host
  if (!host || !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) {
    throw new InvalidRequestError('The request has no valid Host header.')
  }
  // The URL parser's origin, not the raw header: `localhost:80` and `127.1` must compare equal to
  // the origins of the URLs checked against them, and `999.1.1.1` is not a host at all.
  try {
    return new URL(`${requestProtocol(req, config)}://${host}`).origin
  } catch {
    throw new InvalidRequestError('The request has no valid Host header.')
  }
}

const warned = new WeakSet<ResolvedConfig>()

/** Production: refuse. Development: warn once per instance, then go on with the Host header. */
function untrustedHost(config: ResolvedConfig): void {
  const fix = 'Set AUTH_URL to the site\'s URL (e.g. AUTH_URL=https://example.com/api/auth), or trustHost: true (AUTH_TRUST_HOST=true) when a proxy you run sets Host or X-Forwarded-Host.'
  if (config.production) throw new UntrustedHostError(`The site's origin would come from the request's Host header, which any client can set. ${fix}`)
  if (warned.has(config)) return
  warned.add(config)
  config.logger.warn('UntrustedHost', `The site's origin is taken from the request's Host header; in production (NODE_ENV=production) this is refused. ${fix}`)
}

function requestProtocol(req: NodeRequest, config: ResolvedConfig): 'http' | 'https' {
  if ((req.socket as TLSSocket | undefined)?.encrypted) return 'https'
  if (!forwardedHeadersTrusted(req, config)) return 'http'
  return firstValue(req.headers['x-forwarded-proto'])?.toLowerCase() === 'https' ? 'https' : 'http'
}

function forwardedHeadersTrusted(req: NodeRequest, config: ResolvedConfig): boolean {
  if (config.trustHost === true) return true
  if (config.trustHost === false) return false
  // Express compiles `app.set('trust proxy', ...)` into this function (Express 4 and 5 alike).
  const trust = req.app?.get?.('trust proxy fn') as TrustProxy | undefined
  return typeof trust === 'function' && trust(req.socket?.remoteAddress, 0)
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  return value?.split(',')[0]?.trim() || undefined
}

/** The path of a request target as sent: no origin (absolute form), query or fragment; not normalised. */
export function rawPath(target: string): string {
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '')
  const end = path.search(/[?#]/)
  return end === -1 ? path : path.slice(0, end)
}

/**
 * True when a raw path holds a `.` or `..` segment in any spelling (`%2e`, `.%2E`, `..;param`). A
 * URL parser resolves these, Express and Connect route them as they are: two readings of one path.
 */
export function hasDotSegment(path: string): boolean {
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment.split(';', 1)[0]!))
}

/** The request path with its query, as the browser sent it (mounts included). */
export function originalPath(req: NodeRequest): string {
  return req.originalUrl ?? req.url ?? '/'
}

/** True when the client asked for JSON rather than a page (fetch/XHR callers). */
export function wantsJson(req: NodeRequest): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/**
 * Whether a wing's route answers the request with JSON rather than a page: it asks for JSON
 * (`wantsJson`), or it sent a JSON body (a script's fetch that set no `Accept`).
 */
export function answersJson(req: NodeRequest): boolean {
  const type = req.headers['content-type']
  return wantsJson(req) || (typeof type === 'string' && type.startsWith('application/json'))
}

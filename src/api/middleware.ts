/**
 * `app.use(auth)`: resolves the session, then asks `callbacks.authorized`. A refusal sends browsers
 * to the sign-in page with a way back and JSON clients a 401; the auth routes and the configured
 * pages are let through, or a protected app would send the sign-in page to itself forever.
 */
import type { ServerResponse } from 'node:http'
import { pageUrl } from '../actions/context.js'
import { isRequestError, requestErrorResponse } from '../actions/failure.js'
import { hasDotSegment, originalPath, rawPath, requestOrigin, wantsJson, type NodeRequest } from '../http/request.js'
import { sendResponse, sendWebResponse } from '../http/respond.js'
import type { NextFunction } from '../http/router.js'
import type { Session } from '../types.js'
import type { Api } from './context.js'

/** The middleware form of `auth` for one instance. */
export function createMiddleware(api: Api): (req: NodeRequest, res: ServerResponse, next: NextFunction) => Promise<void> {
  const { config, requestScope } = api
  const isExempt = exemption(api)
  return async (req, res, next) => {
    let session: Session | null
    let verdict: boolean | undefined | Response
    try {
      session = await api.session(req, res)
      // Typed as Express's request (the usual case); on node:http it is the plain IncomingMessage.
      verdict = !isExempt(req) && config.callbacks.authorized ? await config.callbacks.authorized({ auth: session, request: req as never }) : true
    } catch (error) {
      return next(error)
    }
    if (typeof Response !== 'undefined' && verdict instanceof Response) return sendWebResponse(res, verdict)
    // Every falsy answer but undefined refuses, as in Auth.js: a JavaScript `auth && …` gives null without a session.
    if (verdict !== undefined && !verdict) return refuse(api, req, res, next)
    requestScope.runUntilClosed({ req, res }, () => next())
  }
}

/**
 * Whether a request is for an auth route or a configured page. Decided on the path exactly as
 * Express and Connect route it: raw, not decoded or normalised (a URL parser would read
 * `/dashboard/%2e%2e/api/auth` as the auth routes while Express serves the dashboard), spelled
 * exactly as configured. A path with a dot segment is never exempt.
 */
function exemption({ config }: Api): (req: NodeRequest) => boolean {
  const exemptPaths = new Set(Object.values(config.pages).flatMap((page) => (page ? [new URL(page, 'http://x').pathname] : [])))
  return (req) => {
    const path = rawPath(originalPath(req))
    if (hasDotSegment(path)) return false
    return exemptPaths.has(path) || path === config.basePath || path.startsWith(`${config.basePath}/`)
  }
}

/**
 * Not authorized: JSON clients get a 401 they can act on, browsers the sign-in page with a way back.
 * `scriptsGet401`: a request that does not ask for HTML (fetch, curl) gets the 401 too (`requirePermission`).
 */
export function refuse({ config }: Api, req: NodeRequest, res: ServerResponse, next: NextFunction, { scriptsGet401 = false }: { scriptsGet401?: boolean } = {}): void {
  let signInUrl: string
  try {
    signInUrl = pageUrl({ config, origin: requestOrigin(req, config), basePath: config.basePath }, 'signIn', '/signin', { callbackUrl: originalPath(req) })
  } catch (error) {
    // A bad Host header is the client's error; a server without a trusted origin (or anything else) the app's to handle.
    if (!isRequestError(error)) return next(error)
    return sendResponse(req, res, requestErrorResponse(error))
  }
  // Auth.js's client asks with X-Auth-Return-Redirect: it gets the same 401, with `url` as it expects.
  if (wantsJson(req) || req.headers['x-auth-return-redirect'] === '1' || (scriptsGet401 && !acceptsHtml(req))) {
    return sendResponse(req, res, { status: 401, json: { error: 'SessionRequired', message: 'Sign in to access this resource.', signInUrl, url: signInUrl } })
  }
  sendResponse(req, res, { redirect: signInUrl })
}

/** A browser asks for HTML; a script (fetch, curl) asks for anything or nothing. */
export function acceptsHtml(req: NodeRequest): boolean {
  return (req.headers.accept ?? '').includes('text/html')
}

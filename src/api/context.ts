/**
 * What the server-side functions share: the resolved config, the request scope that finds the
 * current request, the session read once per request, the request context the actions take, how a
 * result reaches the response, and the one CSRF rule of the calls that change who is signed in.
 */
import type { ServerResponse } from 'node:http'
import type { ActionContext } from '../actions/context.js'
import type { ResolvedConfig } from '../config/types.js'
import { MissingCSRFError, MissingRequestContextError } from '../errors.js'
import { requestOrigin, sessionRequestFor, type NodeRequest } from '../http/request.js'
import { appendCookies, sendResponse, type AuthResponse } from '../http/respond.js'
import type { RequestScope } from '../http/request-scope.js'
import { sameOriginRequest, verifyCsrf } from '../security/csrf.js'
import { withSentCookies, type OutgoingCookie } from '../session/cookies.js'
import { readSession as readStoredSession } from '../session/strategy.js'
import { sessionReadTelemetry } from '../telemetry/session-read.js'
import type { SessionResult } from '../session/types.js'
import type { Session } from '../types.js'
import { withCredentials } from './credential-read.js'
import { requestMemo, setRequestAuth } from './request-auth.js'

/** How the server-side `signIn`/`signOut` check that the request is the user's own (login CSRF). */
export interface CsrfOptions {
  /**
   * The CSRF token the app's form posted (from `getCsrfToken(req, res)`). Default: `req.body.csrfToken`,
   * as a body parser left it.
   */
  csrfToken?: string | undefined
  /**
   * Skips the CSRF check, for calls that are not answers to a browser's form (a test, a job). A
   * browser-facing route that sets this lets any site sign its visitors in or out.
   */
  skipCsrfCheck?: boolean | undefined
}

/** One Portcullis instance's server-side API state, made once by `createAuth`. */
export interface Api {
  readonly config: ResolvedConfig
  readonly requestScope: RequestScope
  /** The request's session, read once per request however often it is asked for. */
  session(req: NodeRequest, res: ServerResponse | undefined): Promise<Session | null>
  /** The pending read of the request, if any. */
  pendingSession(req: NodeRequest): Promise<Session | null> | undefined
  /**
   * Forgets the request's session after a call that changed it and set `cookies` on the response:
   * the next read sees the request's cookies with them applied, as the browser will hold them.
   */
  forgetSession(req: NodeRequest, cookies: readonly OutgoingCookie[]): void
  /**
   * Gives the request the session a feature's own read found (the MCP guard's token for an MCP
   * server): `auth()` on it returns that, and reads nothing.
   */
  settleSession(req: NodeRequest, session: Session): void
}

/** Makes the API state of a resolved config. */
export function createApi(config: ResolvedConfig, requestScope: RequestScope): Api {
  // The pending read of each request, where this engine keeps it cheapest (see request-auth.ts); or,
  // after a call that changed the request's session, the cookies the request's calls set, for the next read.
  const memo = requestMemo<Promise<Session | null> | readonly OutgoingCookie[]>()
  // Every cookie the request's calls set (a sign-out after a sign-in), in order; kept apart from the memo, which a read replaces.
  const sent = new WeakMap<NodeRequest, readonly OutgoingCookie[]>()

  // A read that completes synchronously (see readSession) is settled here, without an await. After a
  // sign-in or sign-out it reads the cookies the browser will hold: the request's own would still
  // carry the session that ended (or was replaced), and re-issue it after the cookie that cleared it.
  const plainRead = (req: NodeRequest, res: ServerResponse | undefined, sentCookies: readonly OutgoingCookie[] | undefined): Promise<Session | null> => {
    try {
      const request = sessionRequestFor(req, config)
      const result = readStoredSession(sentCookies ? { ...request, requestCookies: withSentCookies(request.requestCookies, sentCookies) } : request)
      return result instanceof Promise ? result.then((settled) => deliver(req, res, settled)) : Promise.resolve(deliver(req, res, result))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  // With telemetry's sessionReads on, in a span; otherwise plainRead itself.
  const cookieRead = sessionReadTelemetry(config, plainRead)
  // With a feature that reads credentials (API keys), their headers first; otherwise the cookie read alone.
  const read = config.credentials ? withCredentials(config, config.credentials, cookieRead, setRequestAuth) : cookieRead

  /** Sends the read's cookies (a re-issue, a cleared cookie) and sets `req.auth`. */
  const deliver = (req: NodeRequest, res: ServerResponse | undefined, result: SessionResult): Session | null => {
    if (result.cookies.length > 0) {
      if (res && !res.headersSent) appendCookies(res, result.cookies)
      else config.logger.debug('SessionCookieNotRefreshed', 'The session cookie was due for re-issue, but no response (or one already sent) was given to auth().')
    }
    setRequestAuth(req, result.session)
    return result.session
  }

  return {
    config,
    requestScope,
    session: (req, res) => {
      const known = memo.get(req)
      if (known instanceof Promise) return known
      const pending = read(req, res, known)
      memo.set(req, pending)
      return pending
    },
    pendingSession: (req) => {
      const known = memo.get(req)
      return known instanceof Promise ? known : undefined
    },
    forgetSession: (req, cookies) => {
      const all = [...(sent.get(req) ?? []), ...cookies]
      sent.set(req, all)
      memo.set(req, all)
    },
    settleSession: (req, session) => {
      setRequestAuth(req, session)
      memo.set(req, Promise.resolve(session))
    },
  }
}

/**
 * The current request (`handlers`, the `auth` middleware, `auth(handler)`) as the actions take it.
 * @throws MissingRequestContextError outside a request.
 */
export function serverContext(api: Api, what: string): { req: NodeRequest; res: ServerResponse; ctx: ActionContext } {
  const store = api.requestScope.getStore()
  if (!store) throw new MissingRequestContextError(what)
  const { req, res } = store
  return { req, res, ctx: actionContext(api, req) }
}

/** The action context of a server-side call on `req` (a POST, without a body of its own). */
export function actionContext(api: Api, req: NodeRequest): ActionContext {
  return {
    ...sessionRequestFor(req, api.config),
    req,
    method: 'POST',
    origin: requestOrigin(req, api.config),
    basePath: api.config.basePath,
    query: new URLSearchParams(),
    body: {},
  }
}

/** Ends the response with the result's redirect (`redirect: true`), or only sets its cookies; the URL either way. */
export function finish(api: Api, req: NodeRequest, res: ServerResponse, response: AuthResponse, redirect: boolean): string {
  api.forgetSession(req, response.cookies ?? [])
  const url = response.redirect ?? `${requestOrigin(req, api.config)}/`
  if (redirect) sendResponse(req, res, { ...response, redirect: url })
  else if (!res.headersSent) appendCookies(res, response.cookies ?? [])
  return url
}

/**
 * The server-side calls that change who is signed in need the same proof as the routes' forms: a
 * same-origin request carrying the CSRF token of its cookie.
 * @throws MissingCSRFError
 */
export function assertServerCsrf(api: Api, ctx: ActionContext, options: CsrfOptions, what: string): void {
  if (options.skipCsrfCheck === true) return
  const token = options.csrfToken ?? (ctx.req.body as { csrfToken?: unknown } | undefined)?.csrfToken
  const cookie = ctx.requestCookies[ctx.cookieSet.cookies.csrfToken.name]
  if (!sameOriginRequest(ctx.req.headers, ctx.origin) || !verifyCsrf(cookie, token, api.config.secrets)) {
    throw new MissingCSRFError(`${what}: the request carries no valid CSRF token. Put getCsrfToken(req, res) in the form as csrfToken, or pass { csrfToken }.`)
  }
}

/** True for a Node request (what `auth` and `getAccessToken` tell apart from their other arguments). */
export function isRequest(value: unknown): value is NodeRequest {
  return typeof value === 'object' && value !== null && 'headers' in value && typeof (value as { method?: unknown }).method === 'string'
}

/**
 * The request a server-side call was given first (the request itself, or `{ req, res }`), with its
 * response: as given, else Express's `req.res`.
 * @throws TypeError when `given` is neither.
 */
export function givenRequest(given: unknown, what: string): { req: NodeRequest; res: ServerResponse | undefined } {
  const context = isRequest(given) ? { req: given as NodeRequest } : contextRequest(given)
  if (!context) throw new TypeError(`${what} takes the request (or { req, res }) first.`)
  const { req } = context
  return { req, res: ('res' in context ? context.res : undefined) ?? (req as { res?: ServerResponse }).res }
}

/** The request a request-context object names, or undefined. */
export function contextRequest(value: unknown): { req: NodeRequest; res?: ServerResponse } | undefined {
  return value && typeof value === 'object' && isRequest((value as { req?: unknown }).req) ? (value as { req: NodeRequest; res?: ServerResponse }) : undefined
}

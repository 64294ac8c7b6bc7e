/**
 * `auth` in its five forms (DESIGN §2), and the server-side `signIn` / `signOut`. The session of a
 * request is read once and remembered for that request, so calling `auth` several times costs one
 * decrypt.
 */
import type { AsyncLocalStorage } from 'node:async_hooks'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express'
import { signInWithCredentials } from '../actions/callback/credentials.js'
import { pageUrl, redirectTarget, type ActionContext } from '../actions/context.js'
import { failureResponse, requestErrorResponse } from '../actions/failure.js'
import { loadAuthorize, loadEmailSignIn } from '../actions/signin.js'
import { signOutTo } from '../actions/signout.js'
import { unlinkAccount as unlinkSignedInAccount, type UnlinkAccountOptions } from '../actions/unlink.js'
import type { ConfiguredProvider, ResolvedConfig } from '../config/resolve.js'
import { MissingCSRFError, MissingRequestContextError, RefreshAccessTokenError, UntrustedHostError, type InvalidRequestError } from '../errors.js'
import { csrfState, sameOriginRequest, verifyCsrf } from '../security/csrf.js'
import { sameOriginUrl } from '../security/redirect.js'
import { readSession as readStoredSession } from '../session/strategy.js'
import type { AdapterAccount, Session } from '../types.js'
import type { AccessTokenOptions } from '../oauth/access-token.js'
import { cookieSetFor, originalPath, readCookies, requestOrigin, sessionRequestFor, wantsJson, type NodeRequest } from './request.js'
import { appendCookies, sendResponse, sendWebResponse, type AuthResponse } from './respond.js'
import type { OutgoingCookie } from '../session/cookies.js'
import type { NextFunction, RequestStore } from './router.js'

/** A request as `auth(handler)` hands it to the handler: `req.auth` is set. */
export type AuthenticatedRequest<Req extends IncomingMessage = IncomingMessage> = Req & { auth: Session | null }

/** The `auth` function (spec §4.2, DESIGN §2). */
export interface AuthFunction {
  /** Wraps an Express handler: the session is resolved first and set on `req.auth`. */
  (handler: (req: AuthenticatedRequest<ExpressRequest>, res: ExpressResponse, next: NextFunction) => unknown): (
    req: ExpressRequest,
    res: ExpressResponse,
    next: NextFunction,
  ) => Promise<void>
  /** The same for other request types, e.g. `auth<IncomingMessage, ServerResponse>(handler)` on node:http. */
  <Req extends IncomingMessage, Res extends ServerResponse>(
    handler: (req: AuthenticatedRequest<Req>, res: Res, next: NextFunction) => unknown,
  ): (req: Req, res: Res, next: NextFunction) => Promise<void>
  /** Inside a request that passed through `handlers` or the `auth` middleware: its session. */
  (): Promise<Session | null>
  /** The session of `req`; sets `req.auth` and re-issues the session cookie on `res` when due. */
  (req: IncomingMessage, res?: ServerResponse): Promise<Session | null>
  /** Same as `auth(req, res)`. */
  (context: { req: IncomingMessage; res?: ServerResponse | undefined }): Promise<Session | null>
  /** Middleware (`app.use(auth)`): resolves the session, then runs `callbacks.authorized`. */
  (req: IncomingMessage, res: ServerResponse, next: NextFunction): Promise<void>
}

/** How the server-side `signIn`/`signOut` check that the request is the user's own (login CSRF). */
interface CsrfOptions {
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

/** Options of the server-side `signIn`; other string keys are the form fields (e.g. credentials). */
export interface SignInOptions extends CsrfOptions {
  /** Default true: end the response with the redirect. False: only set the cookies. */
  redirect?: boolean | undefined
  /** Where to go afterwards (same-origin). Default: the page the request came from, else `/`. */
  redirectTo?: string | undefined
  [field: string]: unknown
}

/** Options of the server-side `signOut`. */
export interface SignOutOptions extends CsrfOptions {
  redirect?: boolean | undefined
  redirectTo?: string | undefined
}

/**
 * The CSRF token for the app's own sign-in or sign-out form, to post back as `csrfToken`. Sets the
 * CSRF cookie on `res` when the request has none. Inside a request context, `req` and `res` may be
 * left out.
 */
export type GetCsrfTokenFunction = (req?: IncomingMessage, res?: ServerResponse) => string

/** Server-side sign-in: resolves with the URL the user is (or should be) sent to. */
export type SignInFunction = (
  provider?: string,
  options?: SignInOptions,
  authorizationParams?: string | string[][] | Record<string, string> | URLSearchParams,
) => Promise<string>

/** Server-side sign-out: resolves with the URL the user is (or should be) sent to. */
export type SignOutFunction = (options?: SignOutOptions) => Promise<string>

/** Options of the server-side `unlinkAccount`: which account, and the CSRF proof (as for `signOut`). */
export interface UnlinkOptions extends UnlinkAccountOptions, CsrfOptions {}

/**
 * The server-side `unlinkAccount(providerId, options)`: removes the signed-in user's account at that
 * provider and returns it, unless it is their last way to sign in. Call it from a route handler (it
 * reads the request context, like `signOut`) for a POST of the app's own form carrying the CSRF token.
 * @throws AccountUnlinkError (`code`: not_signed_in, not_linked, ambiguous, last_sign_in_method, unsupported_adapter)
 * @throws MissingCSRFError without a valid CSRF token (unless `skipCsrfCheck`)
 */
export type UnlinkAccountFunction = (providerId: string, options?: UnlinkOptions) => Promise<AdapterAccount>

/**
 * The server-side `getAccessToken`: a valid access token of the signed-in user's account at a
 * provider, refreshed with the stored refresh token when it has expired or expires within
 * `skewSeconds` (default 60). The new tokens are re-sealed into the session cookie (JWT sessions,
 * sent on `res`) or stored through the adapter's `updateAccount` (database sessions). Concurrent
 * calls share one refresh.
 *
 * Inside a request context (`handlers`, the `auth` middleware, `auth(handler)`): `getAccessToken(providerId)`;
 * elsewhere: `getAccessToken({ req, res }, providerId)`. JWT sessions need `res`, before the response is sent.
 *
 * @throws RefreshAccessTokenError when there is no valid token to give (see its `code`); the session
 *   is then marked (`error: 'RefreshAccessTokenError'`) for the codes that need a new sign-in.
 * @throws TypeError for a provider id that is not a configured OAuth/OIDC provider, or a JWT session without a writable `res`.
 * @example
 * ```ts
 * app.get('/events', auth(async (req, res) => {
 *   const token = await getAccessToken('google')
 *   const api = await fetch('https://www.googleapis.com/calendar/v3/users/me/calendarList', { headers: { authorization: `Bearer ${token}` } })
 *   res.json(await api.json())
 * }))
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export interface GetAccessTokenFunction {
  (providerId: string, options?: GetAccessTokenOptions): Promise<string>
  (context: { req: IncomingMessage; res?: ServerResponse | undefined }, providerId: string, options?: GetAccessTokenOptions): Promise<string>
}

/** Options of `getAccessToken`. */
export type GetAccessTokenOptions = AccessTokenOptions

let accessTokenModule: Promise<typeof import('../oauth/access-token.js')> | undefined

/** The access-token code (and openid-client), imported on the first `getAccessToken()` call. */
function loadAccessToken(): Promise<typeof import('../oauth/access-token.js')> {
  return (accessTokenModule ??= import('../oauth/access-token.js'))
}

/** Builds `auth`, `signIn` and `signOut` for a resolved config. */
export function createAuth(config: ResolvedConfig, requestStore: AsyncLocalStorage<RequestStore>) {
  // One read per request, however many times auth is called during it: the pending read is kept on
  // the request, under a symbol of this instance (cheaper than a WeakMap entry per request).
  const sessionRead = Symbol('portcullis.session')
  const sessions = {
    get: (req: IncomingMessage) => (req as IncomingMessage & { [sessionRead]?: Promise<Session | null> })[sessionRead],
    set: (req: IncomingMessage, read: Promise<Session | null> | undefined) => {
      ;(req as IncomingMessage & { [sessionRead]?: Promise<Session | null> })[sessionRead] = read
    },
    delete: (req: IncomingMessage) => sessions.set(req, undefined),
  }

  const resolve = (req: NodeRequest, res: ServerResponse | undefined): Promise<Session | null> => {
    let pending = sessions.get(req)
    if (!pending) {
      pending = readSession(req, res)
      sessions.set(req, pending)
    }
    return pending
  }

  const readSession = async (req: NodeRequest, res: ServerResponse | undefined): Promise<Session | null> => {
    const result = await readStoredSession(sessionRequestFor(req, config))
    if (result.cookies.length > 0) {
      if (res && !res.headersSent) appendCookies(res, result.cookies)
      else config.logger.debug('SessionCookieNotRefreshed', 'The session cookie was due for re-issue, but no response (or one already sent) was given to auth().')
    }
    ;(req as NodeRequest & { auth?: Session | null }).auth = result.session
    return result.session
  }

  const middleware = async (req: NodeRequest, res: ServerResponse, next: NextFunction): Promise<void> => {
    let session: Session | null
    let verdict: boolean | undefined | Response
    try {
      session = await resolve(req, res)
      // The sign-in page and the auth routes stay reachable, or `app.use(auth)` would send the
      // sign-in page to itself forever.
      const exempt = isExempt(req)
      // Typed as Express's request (the usual case); on node:http it is the plain IncomingMessage.
      verdict = !exempt && config.callbacks.authorized ? await config.callbacks.authorized({ auth: session, request: req as never }) : true
    } catch (error) {
      return next(error)
    }
    if (typeof Response !== 'undefined' && verdict instanceof Response) return sendWebResponse(res, verdict)
    if (verdict === false) return refuse(req, res, next)
    requestStore.run({ req, res }, () => next())
  }

  const exemptPaths = new Set(Object.values(config.pages).flatMap((page) => (page ? [new URL(page, 'http://x').pathname] : [])))
  const isExempt = (req: NodeRequest): boolean => {
    const path = new URL(originalPath(req), 'http://x').pathname
    return exemptPaths.has(path) || path === config.basePath || path.startsWith(`${config.basePath}/`)
  }

  // Not authorized: JSON clients get a 401 they can act on, browsers the sign-in page with a way back.
  const refuse = (req: NodeRequest, res: ServerResponse, next: NextFunction): void => {
    let signInUrl: string
    try {
      signInUrl = pageUrl({ config, origin: requestOrigin(req, config), basePath: config.basePath }, 'signIn', '/signin', { callbackUrl: originalPath(req) })
    } catch (error) {
      // A server without a trusted origin is the app's error to handle; a bad Host header the client's.
      if (error instanceof UntrustedHostError) return next(error)
      return sendResponse(req, res, requestErrorResponse(error as InvalidRequestError))
    }
    // Auth.js's client asks with X-Auth-Return-Redirect: it gets the same 401, with `url` as it expects.
    if (wantsJson(req) || req.headers['x-auth-return-redirect'] === '1') {
      return sendResponse(req, res, { status: 401, json: { error: 'SessionRequired', message: 'Sign in to access this resource.', signInUrl, url: signInUrl } })
    }
    sendResponse(req, res, { redirect: signInUrl })
  }

  const wrap =
    (handler: (req: never, res: never, next: NextFunction) => unknown) =>
    async (req: NodeRequest, res: ServerResponse, next: NextFunction): Promise<void> => {
      try {
        await resolve(req, res)
        await requestStore.run({ req, res }, () => handler(req as never, res as never, next))
      } catch (error) {
        if (typeof next === 'function') next(error)
        else throw error
      }
    }

  const auth = ((...args: unknown[]) => {
    const [first, second, third] = args
    if (args.length === 0) {
      const store = requestStore.getStore()
      return store ? resolve(store.req, store.res) : Promise.reject(new MissingRequestContextError('auth()'))
    }
    if (typeof first === 'function') return wrap(first as (req: never, res: never, next: NextFunction) => unknown)
    if (isRequest(first)) {
      if (typeof third === 'function') return middleware(first, second as ServerResponse, third as NextFunction)
      return resolve(first, second as ServerResponse | undefined)
    }
    if (first && typeof first === 'object' && isRequest((first as { req?: unknown }).req)) {
      const context = first as { req: NodeRequest; res?: ServerResponse }
      return resolve(context.req, context.res)
    }
    throw new TypeError('auth() takes (req, res), ({ req, res }), (req, res, next), a handler function, or no arguments inside a request.')
  }) as AuthFunction

  const serverContext = (what: string) => {
    const store = requestStore.getStore()
    if (!store) throw new MissingRequestContextError(what)
    const { req, res } = store
    const ctx: ActionContext = {
      ...sessionRequestFor(req, config),
      req,
      method: 'POST',
      origin: requestOrigin(req, config),
      basePath: config.basePath,
      query: new URLSearchParams(),
      body: {},
    }
    return { req, res, ctx }
  }

  // Default target of server-side sign-in: the page the user came from, if it is ours.
  const defaultTarget = (ctx: ActionContext): string => sameOriginUrl(ctx.req.headers.referer, ctx.origin) ?? `${ctx.origin}/`

  const finish = (req: NodeRequest, res: ServerResponse, response: AuthResponse, redirect: boolean): string => {
    sessions.delete(req)
    const url = response.redirect ?? `${requestOrigin(req, config)}/`
    if (redirect) sendResponse(req, res, { ...response, redirect: url })
    else if (!res.headersSent) appendCookies(res, response.cookies ?? [])
    return url
  }

  /**
   * The server-side calls change who is signed in, so they need the same proof as the routes'
   * forms: a same-origin request carrying the CSRF token of its cookie.
   * @throws MissingCSRFError
   */
  const assertServerCsrf = (ctx: ActionContext, options: CsrfOptions, what = 'signIn()/signOut()'): void => {
    if (options.skipCsrfCheck === true) return
    const token = options.csrfToken ?? (ctx.req.body as { csrfToken?: unknown } | undefined)?.csrfToken
    const cookie = ctx.requestCookies[ctx.cookieSet.cookies.csrfToken.name]
    if (!sameOriginRequest(ctx.req.headers, ctx.origin) || !verifyCsrf(cookie, token, config.secrets)) {
      throw new MissingCSRFError(`${what}: the request carries no valid CSRF token. Put getCsrfToken(req, res) in the form as csrfToken, or pass { csrfToken }.`)
    }
  }

  const signIn: SignInFunction = async (providerId, options = {}, authorizationParams) => {
    const { req, res, ctx } = serverContext('signIn()')
    const { redirect = true, redirectTo, csrfToken, skipCsrfCheck, ...fields } = options
    const callbackUrl = await redirectTarget(ctx, redirectTo ?? defaultTarget(ctx))
    const provider = providerId ? config.providerById.get(providerId) : undefined
    let response: AuthResponse
    if (provider) {
      try {
        assertServerCsrf(ctx, { csrfToken, skipCsrfCheck })
        response = await signInWith(ctx, provider, callbackUrl, fields, authorizationParams)
      } catch (error) {
        if (!redirect) throw error
        response = failureResponse(error, ctx)
      }
    } else {
      // No provider, or one not configured: the sign-in page, as Auth.js does.
      response = { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl }) }
    }
    return finish(req, res, response, redirect)
  }

  const signInWith = async (
    ctx: ActionContext,
    provider: ConfiguredProvider,
    callbackUrl: string,
    fields: Record<string, unknown>,
    authorizationParams: Parameters<SignInFunction>[2],
  ): Promise<AuthResponse> => {
    if (provider.type === 'credentials') return signInWithCredentials({ ...ctx, body: { callbackUrl } }, provider, fields)
    // E-mail: `signIn('<id>', { email })` mails the link and goes to the verify-request page.
    if (provider.type === 'email') return (await loadEmailSignIn()).signInWithEmail(ctx, provider, { email: fields.email, callbackUrl })
    // OAuth/OIDC: the authorization URL, with the check cookies and where to come back to.
    const { authorizationRequest } = await loadAuthorize()
    const authorization = await authorizationRequest(ctx, provider, authorizationParams)
    const callbackCookie = ctx.cookieSet.cookies.callbackUrl
    return { redirect: authorization.url, cookies: [{ name: callbackCookie.name, value: callbackUrl, options: callbackCookie.options }, ...authorization.cookies] }
  }

  const signOut: SignOutFunction = async (options = {}) => {
    const { req, res, ctx } = serverContext('signOut()')
    const redirect = options.redirect ?? true
    let response: AuthResponse
    try {
      assertServerCsrf(ctx, options)
      // Not the page the user came from: it is usually the protected one they are leaving.
      response = await signOutTo(ctx, await redirectTarget(ctx, options.redirectTo ?? `${ctx.origin}/`))
    } catch (error) {
      if (!redirect) throw error
      response = failureResponse(error, ctx)
    }
    return finish(req, res, response, redirect)
  }

  // One token per request, however often the page asks.
  const csrfTokens = new WeakMap<IncomingMessage, string>()
  const getCsrfToken: GetCsrfTokenFunction = (req, res) => {
    const store = req ? { req: req as NodeRequest, res } : requestStore.getStore()
    if (!store) throw new MissingRequestContextError('getCsrfToken()')
    const known = csrfTokens.get(store.req)
    if (known) return known
    const cookie = cookieSetFor(store.req, config).cookies.csrfToken
    const state = csrfState(readCookies(store.req)[cookie.name], config.secrets)
    if (state.newCookieValue) {
      if (!store.res || store.res.headersSent) throw new TypeError('getCsrfToken(req, res): pass the response, to set the CSRF cookie the token belongs to.')
      appendCookies(store.res, [{ name: cookie.name, value: state.newCookieValue, options: cookie.options }])
    }
    csrfTokens.set(store.req, state.token)
    return state.token
  }

  const unlinkAccount: UnlinkAccountFunction = async (providerId, options = {}) => {
    const { req, res, ctx } = serverContext('unlinkAccount()')
    assertServerCsrf(ctx, options, 'unlinkAccount()')
    const { account, cookies } = await unlinkSignedInAccount(ctx, providerId, { providerAccountId: options.providerAccountId })
    if (cookies.length > 0) {
      if (res && !res.headersSent) {
        appendCookies(res, cookies)
        sessions.delete(req)
      } else config.logger.warn('SessionCookieNotRefreshed', `unlinkAccount(): the response was sent before the session cookie could drop the "${providerId}" tokens.`)
    }
    return account
  }

  // The session cookies getAccessToken() set on each request's response, newest last.
  const sentSessionCookies = new WeakMap<IncomingMessage, OutgoingCookie[]>()

  const getAccessToken = (async (...args: unknown[]): Promise<string> => {
    const [first] = args
    let store: { req: NodeRequest; res?: ServerResponse } | undefined
    let rest: unknown[]
    if (typeof first === 'string') {
      store = requestStore.getStore()
      if (!store) throw new MissingRequestContextError('getAccessToken()')
      rest = args
    } else if (first && typeof first === 'object' && isRequest((first as { req?: unknown }).req)) {
      store = first as { req: NodeRequest; res?: ServerResponse }
      rest = args.slice(1)
    } else {
      throw new TypeError('getAccessToken() takes (providerId, options) inside a request, or ({ req, res }, providerId, options).')
    }
    const [providerId, options] = rest as [unknown, GetAccessTokenOptions | undefined]
    const provider = typeof providerId === 'string' ? config.providerById.get(providerId) : undefined
    if (!provider || (provider.type !== 'oauth' && provider.type !== 'oidc')) {
      const known = config.providers.filter((candidate) => candidate.type === 'oauth' || candidate.type === 'oidc').map((candidate) => candidate.id)
      throw new TypeError(`getAccessToken(): "${String(providerId)}" is not a configured OAuth/OIDC provider (configured: ${known.join(', ') || 'none'}).`)
    }
    const { req, res } = store
    // A refresh rotates the refresh token: with JWT sessions the new one exists only in the cookie
    // this response carries, so refreshing without sending it would lose it.
    if (config.session.strategy === 'jwt' && (!res || res.headersSent)) {
      throw new TypeError('getAccessToken() with JWT sessions needs the response, before it is sent: a refresh re-seals the session cookie. Pass { req, res }, or call it inside the request context.')
    }
    // The session as auth() reads it, callbacks included: a session the app ended (a jwt callback
    // returning null, an expired or deleted row) gets no provider token, whatever its cookie holds.
    if (!(await resolve(req, res))) {
      throw new RefreshAccessTokenError('not_signed_in', provider.id, `getAccessToken(): nobody is signed in on this request.`)
    }
    // A second call in the same request starts from the cookie the first one sent, so a refresh of
    // another provider (or of the same one again) keeps what the first stored.
    const base = sessionRequestFor(req, config)
    const sent = sentSessionCookies.get(req)
    const sessionRequest = sent ? { ...base, requestCookies: withSentCookies(base.requestCookies, sent) } : base
    const result = await (await loadAccessToken()).freshAccessToken(sessionRequest, provider, options)
    if (result.cookies.length > 0) {
      sentSessionCookies.set(req, [...(sent ?? []), ...result.cookies])
      if (!res!.headersSent) appendCookies(res!, result.cookies)
      else {
        config.logger.error(
          'SessionCookieNotRefreshed',
          'getAccessToken() stored new provider tokens in the session cookie, but the response was sent meanwhile. This instance answers the old cookie with the new tokens for a day; call getAccessToken() before sending the response.',
        )
      }
    }
    if (result.accessToken !== undefined) return result.accessToken
    if (result.error.code === 'no_refresh_token' || result.error.code === 'invalid_grant') {
      // The rest of this request sees the mark too (JWT sessions also carry it in the new cookie).
      const session = await sessions.get(req)?.catch(() => null)
      if (session) session.error = 'RefreshAccessTokenError'
    }
    const { error } = result
    config.logger[error.logLevel](error.type, error.message)
    throw error
  }) as GetAccessTokenFunction

  return { auth, signIn, signOut, getCsrfToken, unlinkAccount, getAccessToken }
}

/** The request's cookies as the browser will hold them once `sent` arrives: set ones replaced, cleared ones gone. */
function withSentCookies(cookies: Readonly<Record<string, string | undefined>>, sent: readonly OutgoingCookie[]): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...cookies }
  for (const cookie of sent) merged[cookie.name] = cookie.value === '' || cookie.options.maxAge === 0 ? undefined : cookie.value
  return merged
}

function isRequest(value: unknown): value is NodeRequest {
  return typeof value === 'object' && value !== null && 'headers' in value && typeof (value as { method?: unknown }).method === 'string'
}

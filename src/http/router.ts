/**
 * The `handlers` request handler: mount it with `app.use('/api/auth', handlers)` (Express 4 or 5,
 * Connect), or call it from a plain `node:http` server. It finds the action from the path under its
 * mount point, parses the body, runs the action, and writes the plain response.
 */
import type { ServerResponse } from 'node:http'
import { callback } from '../actions/callback.js'
import { compositionOf, hooksOf, type Feature, type FeatureRoute, type MountHandler } from '../composition/index.js'
import type { Action, ActionContext } from '../actions/context.js'
import { csrf } from '../actions/csrf.js'
import { errorPage } from '../actions/error.js'
import { failureResponse, isRequestError, requestErrorResponse } from '../actions/failure.js'
import { providers } from '../actions/providers.js'
import { getSession, updateSession } from '../actions/session.js'
import { signInPage, signInWithProvider } from '../actions/signin.js'
import { signOut, signOutPage } from '../actions/signout.js'
import { verifyRequest } from '../actions/verify-request.js'
import type { ResolvedConfig } from '../config/types.js'
import { InvalidRequestError, UnknownActionError, UntrustedHostError } from '../errors.js'
import { describeError } from '../events.js'
import { logValue } from '../logger.js'
import { readBody } from './body.js'
import type { RequestScope } from './request-scope.js'
import { rawPath, requestOrigin, sessionRequestFor, type NodeRequest } from './request.js'
import { sendResponse, type AuthResponse } from './respond.js'

/** Connect/Express `next`. */
export type NextFunction = (error?: unknown) => void

/** What `handlers` is: Express/Connect middleware, with method-specific variants for route-style mounting. */
export interface Handlers {
  (req: NodeRequest, res: ServerResponse, next?: NextFunction): Promise<void>
  /** For `app.get('/api/auth/*splat', handlers.GET)`: serves GET (and HEAD) only. */
  GET: (req: NodeRequest, res: ServerResponse, next?: NextFunction) => Promise<void>
  /** For `app.post('/api/auth/*splat', handlers.POST)`: serves POST only. */
  POST: (req: NodeRequest, res: ServerResponse, next?: NextFunction) => Promise<void>
}

/** Builds `handlers` for a resolved config. */
export function createHandlers(config: ResolvedConfig, requestScope: RequestScope): Handlers {
  let warnedBasePath = false
  const routes = routeTables(config)

  const serve = async (req: NodeRequest, res: ServerResponse, next: NextFunction | undefined, only?: 'GET' | 'POST'): Promise<void> => {
    const location = locate(req, config)
    if (location === null) return sendResponse(req, res, requestErrorResponse(new InvalidRequestError('The request URL is malformed.')))
    if (!location) {
      // Not under the base path (a plain node:http server serving other routes too).
      if (next) return next()
      return sendResponse(req, res, unknownRoute(req))
    }
    if (location.mounted && location.basePath !== config.basePath && !config.basePathExplicit && !warnedBasePath) {
      warnedBasePath = true
      config.logger.warn(
        'BasePathMismatch',
        `handlers are mounted at ${logValue(location.basePath)} but basePath is "${config.basePath}": set basePath (or AUTH_URL) so that auth() redirects outside the router find it.`,
      )
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method
    if (only && method !== only) return next ? next() : sendResponse(req, res, unknownRoute(req))

    const mounted = mountAt(routes, location.actionPath)
    if (mounted) return serveMount(req, res, location, mounted)

    let response: AuthResponse
    try {
      // A failure is answered inside the route's scope too, so that its log line carries the request's fields.
      response = await requestScope.runRoute({ req, res }, () => run(req, method, location, config, routes).catch((error: unknown) => errorResponse(error, req, config, location.basePath)))
    } catch (error) {
      try {
        response = errorResponse(error, req, config, location.basePath)
      } catch (secondary) {
        // The last line of defence: a failure while reporting a failure still gets an answer,
        // never an unhandled rejection (which ends an Express 4 process).
        config.logger.error('InternalError', describeError(secondary))
        response = { status: 500, json: { error: 'InternalError', message: 'The request could not be processed.' } }
      }
    }
    sendResponse(req, res, response)
  }

  // A feature's mount answers its requests itself (with Node's req and res), inside the route's scope.
  const serveMount = async (req: NodeRequest, res: ServerResponse, location: Location, mounted: { path: string; handler: MountEntry }): Promise<void> => {
    const url = `${location.actionPath.slice(mounted.path.length) || '/'}${location.search}`
    try {
      await requestScope.runRoute({ req, res }, () => mounted.handler(req, res, { config, url, mountPath: location.basePath + mounted.path }))
    } catch (error) {
      if (res.headersSent) {
        config.logger.error('InternalError', describeError(error))
        return void res.end()
      }
      sendResponse(req, res, errorResponse(error, req, config, location.basePath))
    }
  }

  const handlers = ((req, res, next) => serve(req, res, next)) as Handlers
  handlers.GET = (req, res, next) => serve(req, res, next, 'GET')
  handlers.POST = (req, res, next) => serve(req, res, next, 'POST')
  return handlers
}

interface Location {
  basePath: string
  /** The path below the base path, e.g. `/callback/credentials`. */
  actionPath: string
  query: URLSearchParams
  /** The query as sent (`?a=b`, or empty). */
  search: string
  /** True when Express/Connect stripped the mount path from `req.url`. */
  mounted: boolean
}

/** Where the request falls: undefined when not under the base path, null when the URL is malformed. */
function locate(req: NodeRequest, config: ResolvedConfig): Location | undefined | null {
  const url = parsePath(req.url)
  const original = req.originalUrl ? parsePath(req.originalUrl) : url
  if (!url || !original) return null
  if (original.pathname !== url.pathname) {
    // Mounted with app.use(path, handlers): the mount path is what was stripped.
    return { basePath: mountPath(req, config, original, url), actionPath: url.pathname, query: url.searchParams, search: url.search, mounted: true }
  }
  const { basePath } = config
  if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return undefined
  return { basePath, actionPath: url.pathname.slice(basePath.length), query: url.searchParams, search: url.search, mounted: false }
}

/**
 * Where the handlers are mounted, as this request spelled it: `req.baseUrl` (Express), else what
 * Connect stripped from the raw target. Raw, because `/api/auth/../signin` was matched under
 * `/api/auth` though it normalises to `/api/signin`. Express and Connect match mount paths
 * case-insensitively, so a visitor's `/API/Auth` is the configured basePath, spelled as configured
 * in links and no cause for a BasePathMismatch warning.
 */
function mountPath(req: NodeRequest, config: ResolvedConfig, original: URL, url: URL): string {
  const mounted =
    req.baseUrl ??
    strippedPrefix(rawPath(req.originalUrl!), rawPath(req.url ?? '/')) ??
    original.pathname.slice(0, original.pathname.length - url.pathname.length)
  return mounted.toLowerCase() === config.basePath.toLowerCase() ? config.basePath : mounted
}

function strippedPrefix(original: string, stripped: string): string | undefined {
  if (original.endsWith(stripped)) return original.slice(0, original.length - stripped.length)
  // Connect turns a request for the mount path itself into `/`.
  return stripped === '/' ? original : undefined
}

// Parsed as a path on a fixed origin: a request line like `//host/x` stays a path instead of being
// read as a protocol-relative URL. The absolute form (`GET http://host/x`) is reduced to its path,
// as RFC 9112 §3.2.2 asks of servers; anything else (`*`) is malformed here.
function parsePath(path: string | undefined): URL | undefined {
  if (path === undefined) return new URL('http://localhost/')
  try {
    if (path.startsWith('/')) return new URL(`http://localhost${path}`)
    const absolute = new URL(path)
    return absolute.protocol === 'http:' || absolute.protocol === 'https:' ? new URL(`http://localhost${absolute.pathname}${absolute.search}`) : undefined
  } catch {
    return undefined
  }
}

async function run(req: NodeRequest, method: string | undefined, location: Location, config: ResolvedConfig, routes: RouteTables): Promise<AuthResponse> {
  if (method !== 'GET' && method !== 'POST') throw new UnknownActionError(`${logValue(method)} is not supported: the auth routes take GET and POST.`)
  const found = route(routes, method, location.actionPath)
  if (!found) throw new UnknownActionError(`Cannot ${method} ${logValue(location.basePath + location.actionPath)}: there is no such auth route.`)
  // HEAD never changes state (RFC 9110 §9.2.1): a mail scanner or link checker asking for a
  // callback or the session gets an empty answer, and the code, link or session is left untouched.
  if (req.method === 'HEAD' && !found.page) return { status: 200 }
  const ctx: ActionContext = {
    ...sessionRequestFor(req, config),
    req,
    method,
    origin: requestOrigin(req, config),
    basePath: location.basePath,
    query: location.query,
    body: method === 'POST' ? await readBody(req) : {},
  }
  const response = await found.action(ctx)
  return response.html === undefined ? response : withPageBanners(ctx, response)
}

/** A built-in page with the features' banners at its top (an impersonation's), when they have any. */
async function withPageBanners(ctx: ActionContext, response: AuthResponse): Promise<AuthResponse> {
  const hooks = hooksOf(ctx.config, 'pageBanner')
  if (hooks.length === 0) return response
  let banners = ''
  for (const hook of hooks) banners += (await hook(ctx))?.__html ?? ''
  if (banners === '') return response
  return { ...response, html: response.html!.replace('<body>\n', `<body>\n${banners}\n`) }
}

/** A route as the router runs it. */
interface RouteEntry {
  readonly action: Action
  /** It only shows something, so HEAD may run it as GET. */
  readonly page: boolean
}

/** A feature's mount, as the router runs it: its handler loaded on the first request (or why the feature is off). */
type MountEntry = (req: NodeRequest, res: ServerResponse, at: Parameters<MountHandler>[2]) => Promise<void>

interface RouteTables {
  /** The features' mounts (`Feature.mount`) by path, e.g. `/oauth`. */
  readonly mounts: ReadonlyMap<string, MountEntry>
  readonly GET: ReadonlyMap<string, RouteEntry>
  readonly POST: ReadonlyMap<string, RouteEntry>
  /** `/<name>/:provider` routes by method and name, e.g. `POST webauthn-options`: the action for a provider id (or another id in the path). */
  readonly byProvider: ReadonlyMap<string, { readonly method: 'GET' | 'POST'; readonly action: (providerId: string) => Action }>
}

/** The core's routes that only show something (a page, a list, a CSRF token): HEAD may run them as GET. */
const CORE_PAGES: Record<string, Action> = {
  '/providers': providers,
  '/csrf': csrf,
  '/signin': signInPage,
  '/signout': signOutPage,
  '/error': errorPage,
  '/verify-request': verifyRequest,
}

/**
 * The routes of this instance: the core's, and each registered feature's (loaded on its first
 * request; a feature that is off answers its routes with why, and loads nothing of them).
 */
function routeTables(config: ResolvedConfig): RouteTables {
  const GET = new Map<string, RouteEntry>(Object.entries(CORE_PAGES).map(([path, action]) => [path, { action, page: true }]))
  GET.set('/session', { action: getSession, page: false })
  const POST = new Map<string, RouteEntry>([
    ['/session', { action: updateSession, page: false }],
    ['/signout', { action: signOut, page: false }],
  ])
  const byProvider = new Map<string, { method: 'GET' | 'POST'; action: (providerId: string) => Action }>()
  const mounts = new Map<string, MountEntry>()
  const { registered, enabled } = compositionOf(config)
  for (const feature of registered) {
    const on = enabled.includes(feature)
    if (feature.mount) mounts.set(feature.mount.path, on ? lazyMount(feature.mount.load) : offMount(feature))
    for (const declared of feature.routes ?? []) {
      const provider = /^\/([^/]+)\/:provider$/.exec(declared.path)
      if (provider) {
        const off = offAction(feature)
        const forProvider = lazyProviderAction(declared)
        byProvider.set(`${declared.method} ${provider[1]!}`, { method: declared.method, action: on ? forProvider : () => off })
        continue
      }
      const table = declared.method === 'GET' ? GET : POST
      table.set(declared.path, { action: on ? lazyAction(declared) : offAction(feature), page: declared.page === true })
    }
  }
  return { mounts, GET, POST, byProvider }
}

/** A feature's mount handler, imported on its first request and kept. */
function lazyMount(load: () => Promise<MountHandler>): MountEntry {
  let loaded: Promise<MountHandler> | undefined
  return async (req, res, at) => (await (loaded ??= load()))(req, res, at)
}

/** The mount of a feature the config leaves off: unknown, and why. */
function offMount(feature: Feature): MountEntry {
  return async () => {
    throw new UnknownActionError(feature.off ?? `The ${feature.name} feature is off.`)
  }
}

/** The mount the action path falls under (`/oauth`, `/oauth/token`), if any. */
function mountAt(routes: RouteTables, actionPath: string): { path: string; handler: MountEntry } | undefined {
  for (const [path, handler] of routes.mounts) {
    if (actionPath === path || actionPath.startsWith(`${path}/`)) return { path, handler }
  }
  return undefined
}

/** A feature's action, imported on the route's first request and kept. */
function lazyAction(declared: FeatureRoute): Action {
  let loaded: Promise<Action> | undefined
  return async (ctx) => (await (loaded ??= declared.load()))(ctx)
}

/**
 * A feature's `/<name>/:provider` route: its loader gives the action for a provider id (as
 * `webauthnOptions(id)`), imported on the first request and kept for every provider.
 */
function lazyProviderAction(declared: FeatureRoute): (providerId: string) => Action {
  let loaded: Promise<(providerId: string) => Action> | undefined
  return (providerId) => async (ctx) => (await (loaded ??= declared.load() as unknown as Promise<(providerId: string) => Action>))(providerId)(ctx)
}

/** A route of a feature the config leaves off: unknown, and why. */
function offAction(feature: Feature): Action {
  return async () => {
    throw new UnknownActionError(feature.off ?? `The ${feature.name} feature is off.`)
  }
}

function trimmed(actionPath: string): string {
  return actionPath.length > 1 && actionPath.endsWith('/') ? actionPath.slice(0, -1) : actionPath
}

function route(routes: RouteTables, method: 'GET' | 'POST', actionPath: string): RouteEntry | undefined {
  const path = trimmed(actionPath)
  const table = routes[method]
  const known = table.get(path)
  if (known) return known
  const match = /^\/([^/]+)\/([^/]+)$/.exec(path)
  if (!match) return undefined
  const [, kind, rawId] = match
  let providerId: string
  try {
    providerId = decodeURIComponent(rawId!)
  } catch {
    return undefined
  }
  if (kind === 'callback') return { action: callback(providerId), page: false }
  if (kind === 'signin') return method === 'POST' ? { action: signInWithProvider(providerId), page: false } : undefined
  // A feature's, such as webauthn-options: it stores a challenge, so it is no page (HEAD does not run it).
  const byProvider = routes.byProvider.get(`${method} ${kind!}`)
  return byProvider ? { action: byProvider.action(providerId), page: false } : undefined
}

function unknownRoute(req: NodeRequest): AuthResponse {
  return requestErrorResponse(new UnknownActionError(`Cannot ${logValue(req.method)} ${logValue(req.url ?? '')}: there is no such auth route.`))
}

/**
 * Turns a failure into a response: malformed requests get a 4xx JSON answer, flow failures the
 * page that failure.ts picks.
 */
function errorResponse(error: unknown, req: NodeRequest, config: ResolvedConfig, basePath: string): AuthResponse {
  if (isRequestError(error)) return requestErrorResponse(error)
  // Without a trusted origin there is no page to redirect to.
  if (error instanceof UntrustedHostError) return untrustedHostResponse(error, config)
  let origin: string
  try {
    origin = requestOrigin(req, config)
  } catch (hostError) {
    return errorResponse(hostError, req, config, basePath)
  }
  return failureResponse(error, { config, origin, basePath })
}

const reportedUntrustedHost = new WeakSet<ResolvedConfig>()

/** 500 with the generic code; the fix goes to the log once per instance, not to every visitor. */
function untrustedHostResponse(error: UntrustedHostError, config: ResolvedConfig): AuthResponse {
  if (!reportedUntrustedHost.has(config)) {
    reportedUntrustedHost.add(config)
    config.logger.error('UntrustedHost', error.message)
  }
  return { status: 500, json: { error: 'Configuration', message: 'The server is not configured to know its own URL.' } }
}

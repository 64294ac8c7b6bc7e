/**
 * `auth` in its five forms (spec §4.2, DESIGN §2). The session of a request is read once and
 * remembered for that request, so calling `auth` several times costs one decrypt.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express'
import { MissingRequestContextError } from '../errors.js'
import type { NodeRequest } from '../http/request.js'
import type { NextFunction } from '../http/router.js'
import type { Session } from '../types.js'
import { contextRequest, isRequest, type Api } from './context.js'
import { createMiddleware } from './middleware.js'

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

type Handler = (req: never, res: never, next: NextFunction) => unknown

/** Builds `auth` for one instance. */
export function createAuthFunction(api: Api): AuthFunction {
  const middleware = createMiddleware(api)

  const wrap =
    (handler: Handler) =>
    async (req: NodeRequest, res: ServerResponse, next: NextFunction): Promise<void> => {
      try {
        await api.session(req, res)
        await api.requestScope.runUntilClosed({ req, res }, () => handler(req as never, res as never, next))
      } catch (error) {
        if (typeof next === 'function') next(error)
        else throw error
      }
    }

  return ((...args: unknown[]) => {
    const [first, second, third] = args
    if (args.length === 0) {
      const store = api.requestScope.getStore()
      return store ? api.session(store.req, store.res) : Promise.reject(new MissingRequestContextError('auth()'))
    }
    if (typeof first === 'function') return wrap(first as Handler)
    if (isRequest(first)) {
      if (typeof third === 'function') return middleware(first, second as ServerResponse, third as NextFunction)
      return api.session(first, second as ServerResponse | undefined)
    }
    const context = contextRequest(first)
    if (context) return api.session(context.req, context.res)
    throw new TypeError('auth() takes (req, res), ({ req, res }), (req, res, next), a handler function, or no arguments inside a request.')
  }) as AuthFunction
}

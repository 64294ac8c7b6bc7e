/** The server-side `getCsrfToken(req, res)`: the token for the app's own sign-in or sign-out form. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { MissingRequestContextError } from '../errors.js'
import { cookieSetFor, readCookies, type NodeRequest } from '../http/request.js'
import { appendCookies } from '../http/respond.js'
import { csrfState } from '../security/csrf.js'
import type { Api } from './context.js'

/**
 * The CSRF token for the app's own sign-in or sign-out form, to post back as `csrfToken`. Sets the
 * CSRF cookie on `res` when the request has none. Inside a request context, `req` and `res` may be
 * left out.
 */
export type GetCsrfTokenFunction = (req?: IncomingMessage, res?: ServerResponse) => string

/** Builds `getCsrfToken` for one instance. */
export function createGetCsrfToken({ config, requestScope }: Api): GetCsrfTokenFunction {
  // One token per request, however often the page asks.
  const tokens = new WeakMap<IncomingMessage, string>()
  return (req, res) => {
    const store = req ? { req: req as NodeRequest, res } : requestScope.getStore()
    if (!store) throw new MissingRequestContextError('getCsrfToken()')
    const known = tokens.get(store.req)
    if (known) return known
    const cookie = cookieSetFor(store.req, config).cookies.csrfToken
    const state = csrfState(readCookies(store.req)[cookie.name], config.secrets)
    if (state.newCookieValue) {
      if (!store.res || store.res.headersSent) throw new TypeError('getCsrfToken(req, res): pass the response, to set the CSRF cookie the token belongs to.')
      appendCookies(store.res, [{ name: cookie.name, value: state.newCookieValue, options: cookie.options }])
    }
    tokens.set(store.req, state.token)
    return state.token
  }
}

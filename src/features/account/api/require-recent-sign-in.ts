/**
 * The server-side `requireRecentSignIn`: whether the request's session was signed in or confirmed
 * within `maxAge` seconds, for an app's own sensitive action (a payout, an export), and its
 * middleware form, which sends the user to confirm and back.
 */
import type { ServerResponse } from 'node:http'
import { isRequestError, requestErrorResponse } from '../../../actions/failure.js'
import { actionContext, givenRequest, isRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { originalPath, wantsJson, type NodeRequest } from '../../../http/request.js'
import { sendResponse } from '../../../http/respond.js'
import type { NextFunction } from '../../../http/router.js'
import { accountOf } from '../config.js'
import { checkRecentSignIn, type RecentSignIn } from '../recent.js'

/** What `requireRecentSignIn` takes. */
export interface RecentSignInOptions {
  /** Seconds the last sign-in or confirmation counts as recent. Default: `account.recentSignInMaxAge` (600). */
  maxAge?: number | undefined
  /** Where the confirmation page sends the user back. Default: the request's own path (for a GET; a same-site path). */
  returnTo?: string | undefined
}

/** An Express/Connect middleware. */
export type RecentSignInMiddleware = (req: NodeRequest, res: ServerResponse, next: NextFunction) => Promise<void>

/**
 * Checks that the request's session was signed in or confirmed within `maxAge` seconds; with
 * options only, the middleware that lets such requests through and sends the others to confirm
 * (browsers: a redirect to the confirmation page, which comes back to the request's path; JSON
 * clients: a 403 `{ error: 'RecentSignInRequired', url }`, or a 401 with the sign-in page's URL
 * when nobody is signed in).
 *
 * @returns `{ recent: true, userId, confirmedAt, confirmedWith }`, or `{ recent: false, signedIn, url }`
 *   with the page to send the user to.
 * @throws InvalidConfigurationError when the `account` option is off (the confirmation page is its).
 * @example
 * ```ts
 * app.post('/payouts', async (req, res) => {
 *   const check = await requireRecentSignIn(req, { maxAge: 300, returnTo: '/payouts' })
 *   if (!check.recent) return res.redirect(check.url)
 *   res.json({ paidTo: check.userId })
 * })
 * app.use('/settings/billing', requireRecentSignIn({ maxAge: 300 }))
 * ```
 */
export interface RequireRecentSignInFunction {
  (req: SessionsCallContext, options?: RecentSignInOptions): Promise<RecentSignIn>
  (options?: RecentSignInOptions): RecentSignInMiddleware
}

export function createRequireRecentSignIn(api: Api): RequireRecentSignInFunction {
  const check = async (req: NodeRequest, options: RecentSignInOptions): Promise<RecentSignIn> => {
    const account = accountOf(api.config)
    const maxAge = options.maxAge ?? account.recentSignInMaxAge
    if (!Number.isFinite(maxAge) || maxAge <= 0) throw new TypeError('requireRecentSignIn(): maxAge must be a number of seconds above 0.')
    const ctx = actionContext(api, req)
    return checkRecentSignIn(ctx, maxAge, options.returnTo ?? originalPath(req))
  }
  const middleware = (options: RecentSignInOptions): RecentSignInMiddleware => async (req, res, next) => {
    let answer: RecentSignIn
    try {
      answer = await check(req, options)
    } catch (error) {
      if (!isRequestError(error)) return next(error)
      return sendResponse(req, res, requestErrorResponse(error))
    }
    if (answer.recent) return next()
    if (wantsJson(req) || req.headers['x-auth-return-redirect'] === '1') {
      const json = answer.signedIn
        ? { error: 'RecentSignInRequired', message: 'Confirm who you are to continue.', url: answer.url }
        : { error: 'SessionRequired', message: 'Sign in to access this resource.', signInUrl: answer.url, url: answer.url }
      return sendResponse(req, res, { status: answer.signedIn ? 403 : 401, json })
    }
    sendResponse(req, res, { redirect: answer.url })
  }
  return ((first?: unknown, options?: RecentSignInOptions) => {
    if (first === undefined || (!isRequest(first) && !(first && typeof first === 'object' && 'req' in first))) return middleware((first as RecentSignInOptions | undefined) ?? {})
    return check(givenRequest(first, 'requireRecentSignIn()').req, options ?? {})
  }) as RequireRecentSignInFunction
}

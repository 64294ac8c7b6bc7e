/**
 * The built-in sensitive actions' fresh sign-in (docs/account.md): changing the password, the second
 * factor or the passkeys asks the `sensitiveAction` hook first, which the account wing gives when
 * its option is on. The wings that own those actions call these two functions and import no other
 * wing: without the account wing there is no hook, and nothing changes. Before the hook, a session an
 * administrator started as the user (impersonation, session/actor.ts) is refused outright: those
 * changes are the user's own to make.
 */
import { hooksOf } from '../composition/index.js'
import { ImpersonatingError, RecentSignInRequiredError } from '../errors.js'
import { impersonatorOf } from '../session/strategy.js'
import { failureResponse } from './failure.js'
import { wantsJson } from '../http/request.js'
import type { AuthResponse } from '../http/respond.js'
import type { ActionContext } from './context.js'

/**
 * For a server-side function: throws when the session's last confirmation is too old for `what`.
 * @param returnTo Where the confirmation page (the error's `url`) sends the user back.
 * @throws RecentSignInRequiredError
 */
export async function assertRecentSignInIfRequired(ctx: ActionContext, what: string, returnTo: string): Promise<void> {
  await assertNotImpersonating(ctx, what)
  for (const hook of hooksOf(ctx.config, 'sensitiveAction')) await hook(ctx, what, returnTo)
}

/**
 * Refuses a change of the user's credentials in a session an administrator started as the user
 * (impersonation): it is not theirs to make, whatever the recency of the sign-in.
 * @throws ImpersonatingError
 */
export async function assertNotImpersonating(ctx: ActionContext, what: string): Promise<void> {
  const by = await impersonatorOf(ctx)
  if (by) throw new ImpersonatingError(what, by)
}

/**
 * For a route: undefined when the action may go on, else the answer that sends a browser to the
 * confirmation page (and back to `returnTo`), or tells a JSON client `403 { error:
 * 'RecentSignInRequired', url }`, as `requireRecentSignIn()`'s middleware does. `json`: always the
 * latter (a route a script fetches).
 */
export async function recentSignInRefusal(ctx: ActionContext, what: string, returnTo: string, options: { json?: boolean } = {}): Promise<AuthResponse | undefined> {
  try {
    await assertRecentSignInIfRequired(ctx, what, returnTo)
    return undefined
  } catch (error) {
    if (error instanceof ImpersonatingError) return failureResponse(error, ctx)
    if (!(error instanceof RecentSignInRequiredError) || error.url === undefined) throw error
    ctx.config.logger.debug('RecentSignInRequired', error.message)
    return recentSignInAnswer(ctx, error.url, options.json)
  }
}

/**
 * The answer of a refused route: JSON clients (or any, with `json`: a script's fetch) a 403 with the
 * confirmation page's URL, browsers a redirect to it.
 */
export function recentSignInAnswer(ctx: Pick<ActionContext, 'req'>, url: string, json = false): AuthResponse {
  if (json || wantsJson(ctx.req) || ctx.req.headers['x-auth-return-redirect'] === '1') {
    return { status: 403, json: { error: 'RecentSignInRequired', message: 'Confirm who you are to continue.', url } }
  }
  return { redirect: url }
}

/**
 * Where a server-side function's confirmation sends the user back: the page the request came from
 * (its same-origin `Referer`; the confirmation page passes it through the `redirect` callback), else
 * a GET's own path, else the site's root.
 */
export function callerPage(ctx: Pick<ActionContext, 'req' | 'origin'>): string {
  const referer = ctx.req.headers.referer
  if (typeof referer === 'string') {
    try {
      const url = new URL(referer)
      if (url.origin === ctx.origin) return `${url.pathname}${url.search}`
    } catch {
      // An unparsable Referer is no page to go back to.
    }
  }
  return ctx.req.method === 'GET' ? (ctx.req.originalUrl ?? ctx.req.url ?? '/') : '/'
}

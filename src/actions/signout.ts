/**
 * GET /signout: confirmation page (or `pages.signOut`).
 * POST /signout: CSRF-checked; ends the session, clears every session cookie chunk, redirects.
 *
 * Sign-out goes where the request says (`callbackUrl`, or `redirectTo` as Auth.js's client names
 * it), else to the site's root; never to the callback-url cookie. That cookie is left over from the
 * last sign-in and usually names the protected page the user is leaving, which would send them
 * straight back to the sign-in page.
 */
import { renderSignOutPage } from '../pages/index.js'
import { endSession } from '../session/strategy.js'
import { assertCsrf, issueCsrf, pageUrl, redirectTarget, stringValue, type Action, type ActionContext } from './context.js'
import type { AuthResponse } from '../http/respond.js'
import { homeUrl } from './home.js'

export const signOutPage: Action = async (ctx) => {
  const callbackUrl = await signOutTarget(ctx)
  if (ctx.config.pages.signOut) return { redirect: pageUrl(ctx, 'signOut', '/signout', { callbackUrl }) }
  const csrf = issueCsrf(ctx)
  const html = renderSignOutPage({
    csrfToken: csrf.token,
    callbackUrl,
    action: `${ctx.basePath}/signout`,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, cookies: csrf.cookies }
}

export const signOut: Action = async (ctx) => {
  assertCsrf(ctx)
  return signOutTo(ctx, await signOutTarget(ctx))
}

/**
 * Ends the request's session and redirects to `redirectTo`; shared with the server-side `signOut()`.
 *
 * @throws AdapterError when the database could not delete the session row: nothing is cleared, the
 *   user is still signed in and can try again (see endDatabaseSession).
 */
export async function signOutTo(ctx: Pick<ActionContext, 'config' | 'cookieSet' | 'requestCookies' | 'now'>, redirectTo: string): Promise<AuthResponse> {
  return { redirect: redirectTo, cookies: await endSession(ctx) }
}

/** The request's `callbackUrl` or `redirectTo` (body, then query) through the `redirect` callback, else the site's root. */
async function signOutTarget(ctx: ActionContext): Promise<string> {
  const requested =
    stringValue(ctx.body.callbackUrl) ?? stringValue(ctx.body.redirectTo) ?? stringValue(ctx.query.get('callbackUrl')) ?? stringValue(ctx.query.get('redirectTo'))
  return requested === undefined ? `${ctx.origin}/` : redirectTarget(ctx, requested)
}

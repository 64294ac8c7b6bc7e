/**
 * GET /signout: confirmation page (or `pages.signOut`).
 * POST /signout: CSRF-checked; ends the session, clears every session cookie chunk, redirects.
 */
import { renderSignOutPage } from '../pages/index.js'
import { endSession } from '../session/strategy.js'
import { assertCsrf, issueCsrf, pageUrl, resolveCallbackUrl, type Action, type ActionContext } from './context.js'
import type { AuthResponse } from '../http/respond.js'

export const signOutPage: Action = async (ctx) => {
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  if (ctx.config.pages.signOut) return { redirect: pageUrl(ctx, 'signOut', '/signout', { callbackUrl }), cookies }
  const csrf = issueCsrf(ctx)
  const html = renderSignOutPage({
    csrfToken: csrf.token,
    callbackUrl,
    action: `${ctx.basePath}/signout`,
    theme: ctx.config.theme,
  })
  return { html, cookies: [...cookies, ...csrf.cookies] }
}

export const signOut: Action = async (ctx) => {
  assertCsrf(ctx)
  const { url } = await resolveCallbackUrl(ctx)
  return signOutTo(ctx, url)
}

/** Ends the request's session and redirects to `redirectTo`; shared with the server-side `signOut()`. */
export async function signOutTo(ctx: Pick<ActionContext, 'config' | 'cookieSet' | 'requestCookies' | 'now'>, redirectTo: string): Promise<AuthResponse> {
  return { redirect: redirectTo, cookies: await endSession(ctx) }
}

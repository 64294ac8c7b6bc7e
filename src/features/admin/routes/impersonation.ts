/**
 * GET /admin/impersonation: the impersonation in progress and its "stop" button; POST
 * /admin/impersonation/stop `{ csrfToken }`: back to the administrator's own session, then to the
 * admin pages (the users list).
 */
import { assertCsrf, authUrl, issueCsrf, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import type { AuthResponse } from '../../../http/respond.js'
import { impersonatorOf, readSession } from '../../../session/strategy.js'
import { AdminError } from '../errors.js'
import { stopImpersonation } from '../impersonation.js'
import type { SafeHtml } from '../../../pages/html.js'
import { impersonationBanner, renderImpersonationPage } from '../pages/impersonation.js'

export const impersonationPageAction: Action = (ctx) => impersonationPage(ctx, 200)

export const stopImpersonationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  try {
    const { cookies } = await stopImpersonation(ctx)
    return { redirect: authUrl(ctx, '/admin'), cookies }
  } catch (error) {
    if (!(error instanceof AdminError)) throw error
    return impersonationPage(ctx, 400, 'This session is no impersonation.')
  }
}

/** The page for the request's session, with a message. */
export async function impersonationPage(ctx: ActionContext, status: number, error?: string): Promise<AuthResponse> {
  const by = await impersonatorOf(ctx)
  const session = by ? (await readSession(ctx)).session : null
  const csrf = issueCsrf(ctx)
  const html = renderImpersonationPage({
    basePath: ctx.basePath,
    csrfToken: csrf.token,
    who: session ? (session.user.email ?? session.user.name ?? session.user.id) : undefined,
    expires: session ? new Date(session.expires) : undefined,
    error,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}

/** The banner of every built-in page during an impersonation (the `pageBanner` hook). */
export async function impersonationBannerOf(ctx: ActionContext): Promise<SafeHtml | undefined> {
  const { session } = await readSession(ctx)
  if (!session?.impersonatedBy) return undefined
  return impersonationBanner(ctx.basePath, session.user.email ?? session.user.name ?? session.user.id)
}

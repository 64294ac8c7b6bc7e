/**
 * GET /admin/impersonation: the impersonation in progress and its "stop" button; POST
 * /admin/impersonation/stop `{ csrfToken }`: back to the administrator's own session, then to the
 * admin pages (the users list).
 */
import { assertCsrf, authUrl, issueCsrf, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import type { AuthResponse } from '../../../http/respond.js'
import { readSession } from '../../../session/strategy.js'
import type { Session } from '../../../types.js'
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
async function impersonationPage(ctx: ActionContext, status: number, error?: string): Promise<AuthResponse> {
  const impersonated = await impersonatedSession(ctx)
  const csrf = issueCsrf(ctx)
  const html = renderImpersonationPage({
    basePath: ctx.basePath,
    csrfToken: csrf.token,
    who: impersonated ? shownUser(impersonated) : undefined,
    expires: impersonated ? new Date(impersonated.expires) : undefined,
    error,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}

/** The banner of every built-in page during an impersonation (the `pageBanner` hook). */
export async function impersonationBannerOf(ctx: ActionContext): Promise<SafeHtml | undefined> {
  const impersonated = await impersonatedSession(ctx)
  return impersonated ? impersonationBanner(ctx.basePath, shownUser(impersonated)) : undefined
}

/** The request's session when it is an impersonation, else null. */
async function impersonatedSession(ctx: ActionContext): Promise<Session | null> {
  const { session } = await readSession(ctx)
  return session?.impersonatedBy ? session : null
}

/** The impersonated user as the pages name them: their address, else their name, else their id. */
const shownUser = ({ user }: Session): string => user.email ?? user.name ?? user.id

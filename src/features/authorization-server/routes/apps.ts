/** GET /oauth-apps: the signed-in user's apps with access (a themed page, or `{ apps }` as JSON). */
import { authUrl, issueCsrf, pageUrl, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { wantsJson } from '../../../http/request.js'
import type { AuthResponse } from '../../../http/respond.js'
import { signedInUserId } from '../../../session/strategy.js'
import { listApps } from '../manage.js'
import { renderAppsPage } from '../pages/apps.js'

const NOTICES: Readonly<Record<string, string>> = Object.freeze({ removed: 'The app no longer has access to your account.' })

/** The signed-in user (a cookie session), or the answer for a visitor. */
export async function appsUser(ctx: ActionContext): Promise<{ userId: string } | { response: AuthResponse }> {
  const userId = await signedInUserId(ctx)
  if (userId) return { userId }
  if (wantsJson(ctx.req)) return { response: { status: 401, json: { error: 'Unauthorized', message: 'Sign in to see the apps with access to your account.' } } }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/oauth-apps') }) } }
}

export const appsPage: Action = async (ctx) => {
  const asking = await appsUser(ctx)
  if ('response' in asking) return asking.response
  const apps = await listApps(ctx.config, asking.userId)
  if (wantsJson(ctx.req)) return { json: { apps }, headers: { 'Cache-Control': 'no-store' } }
  const csrf = issueCsrf(ctx)
  const html = renderAppsPage({ apps, notice: NOTICES[ctx.query.get('notice') ?? ''], csrfToken: csrf.token, basePath: ctx.basePath, theme: ctx.config.theme, homeUrl: homeUrl(ctx) })
  return { html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store' } }
}

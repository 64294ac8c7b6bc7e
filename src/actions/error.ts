/** GET /error: the error page (500 / 403 / 200 by code), or the app's own `pages.error`. */
import { renderErrorPage } from '../pages/index.js'
import { pageUrl, type Action } from './context.js'
import { homeUrl } from './home.js'

export const errorPage: Action = async (ctx) => {
  const error = ctx.query.get('error') ?? undefined
  if (ctx.config.pages.error) return { redirect: pageUrl(ctx, 'error', '/error', { error }) }
  const { status, html } = renderErrorPage({
    error,
    homeUrl: homeUrl(ctx),
    signInUrl: pageUrl(ctx, 'signIn', '/signin'),
    theme: ctx.config.theme,
  })
  return { status, html }
}

/**
 * GET /account/restored `?callbackUrl`: where a sign-in that restored an account sends the browser
 * (grace.ts). It shows a fixed message and a link on, through the `redirect` callback like every
 * callback URL (another site's URL becomes the site's root); it reads and changes nothing.
 */
import { redirectTarget, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { renderRestoredPage } from '../pages/restored.js'

export const restoredPage: Action = async (ctx) => {
  const continueUrl = await redirectTarget(ctx, ctx.query.get('callbackUrl') ?? '/')
  return { status: 200, html: renderRestoredPage({ continueUrl, theme: ctx.config.theme, homeUrl: homeUrl(ctx) }) }
}

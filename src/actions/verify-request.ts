/** GET /verify-request: "check your e-mail", or the app's own `pages.verifyRequest`. */
import { renderVerifyRequestPage } from '../pages/index.js'
import { pageUrl, type Action } from './context.js'
import { homeUrl } from './home.js'

export const verifyRequest: Action = async (ctx) => {
  if (ctx.config.pages.verifyRequest) return { redirect: pageUrl(ctx, 'verifyRequest', '/verify-request', { provider: ctx.query.get('provider') ?? undefined, type: ctx.query.get('type') ?? undefined }) }
  const type = ctx.query.get('type')
  return { html: renderVerifyRequestPage({ homeUrl: homeUrl(ctx), type: type === 'signup' || type === 'reset' ? type : 'email', theme: ctx.config.theme }) }
}

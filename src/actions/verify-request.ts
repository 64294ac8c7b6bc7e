/** GET /verify-request: "check your e-mail", or the app's own `pages.verifyRequest`. */
import { renderVerifyRequestPage } from '../pages/index.js'
import { pageUrl, type Action } from './context.js'

export const verifyRequest: Action = async (ctx) => {
  if (ctx.config.pages.verifyRequest) return { redirect: pageUrl(ctx, 'verifyRequest', '/verify-request') }
  return { html: renderVerifyRequestPage({ homeUrl: `${ctx.origin}/`, theme: ctx.config.theme }) }
}

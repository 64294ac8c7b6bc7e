/** GET /sessions: the themed page listing the user's sessions, a button per device. */
import { renderSessionsPage } from '../pages/sessions.js'
import { listOwnSessions } from '../../../session/devices.js'
import { issueCsrf, type Action } from '../../../actions/context.js'
import { ownerOrSignIn } from './shared.js'
import { homeUrl } from '../../../actions/home.js'

export const sessionsPage: Action = async (ctx) => {
  const asking = await ownerOrSignIn(ctx)
  if ('response' in asking) return asking.response
  const sessions = await listOwnSessions(ctx, asking.owner)
  const csrf = issueCsrf(ctx)
  return { html: renderSessionsPage({ sessions, csrfToken: csrf.token, basePath: ctx.basePath, theme: ctx.config.theme, homeUrl: homeUrl(ctx) }), cookies: csrf.cookies }
}

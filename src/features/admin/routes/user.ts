/** GET /admin/user `?id&notice`: one user's page (`getUserDetails`: the caller needs `user: ['list']`). */
import { authUrl, type Action } from '../../../actions/context.js'
import { NOTICES, userPage } from './shared.js'

export const userPageAction: Action = async (ctx) => {
  const id = ctx.query.get('id') ?? ''
  // No user named: the list, which checks the caller's permission as this page would.
  if (id.length === 0 || id.length > 255) return { redirect: authUrl(ctx, '/admin') }
  const notice = ctx.query.get('notice')
  return userPage(ctx, id, 200, notice !== null && Object.hasOwn(NOTICES, notice) ? { notice: NOTICES[notice] } : {})
}

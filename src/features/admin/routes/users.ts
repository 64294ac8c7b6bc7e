/** GET /admin `?q&offset`: the users list (`listUsers`: the caller needs `user: ['list']`). */
import { authUrl, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { createListUsers } from '../api/list-users.js'
import { renderAdminUsersPage } from '../pages/users.js'
import type { AdminUserPage } from '../types.js'
import { adminRequest, NOTICES, refusedCaller } from './shared.js'

/** Users a page. */
const PAGE_SIZE = 25

export const usersPage: Action = async (ctx) => {
  const search = (ctx.query.get('q') ?? '').trim().slice(0, 255)
  const given = ctx.query.get('offset') ?? ''
  // A page number in the URL is anyone's to edit: anything but plain digits is the first page.
  const offset = /^\d{1,9}$/.test(given) ? Number(given) : 0
  const { api, call } = adminRequest(ctx)
  let page: AdminUserPage
  try {
    page = await createListUsers(api)(call, { search: search || undefined, limit: PAGE_SIZE, offset })
  } catch (error) {
    const refused = refusedCaller(ctx, error, `${authUrl(ctx, '/admin')}${ctx.query.size > 0 ? `?${ctx.query}` : ''}`)
    if (refused) return refused
    throw error
  }
  const html = renderAdminUsersPage({
    basePath: ctx.basePath,
    search,
    users: page.users,
    total: page.total,
    offset,
    limit: PAGE_SIZE,
    notice: ctx.query.get('notice') === 'deleted' ? NOTICES.deleted : undefined,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, headers: { 'Cache-Control': 'no-store' } }
}

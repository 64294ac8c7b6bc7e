/** POST /admin/user/unban `{ csrfToken, id }`: lifts the user's ban (`unbanUser`). */
import type { Action } from '../../../actions/context.js'
import { createUnbanUser } from '../api/ban-user.js'
import { userAction } from './shared.js'

export const unbanUserAction: Action = async (ctx) =>
  userAction(
    ctx,
    'unban',
    async (api, call, userId, csrf) => {
      await createUnbanUser(api)(call, userId, csrf)
    },
    { notice: 'unbanned', invalid: 'The ban could not be lifted.' },
  )

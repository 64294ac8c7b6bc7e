/** POST /admin/user/two-factor `{ csrfToken, id }`: removes the user's second factor (`resetUserTwoFactor`). */
import type { Action } from '../../../actions/context.js'
import { createResetUserTwoFactor } from '../api/help-user.js'
import { userAction } from './shared.js'

export const resetTwoFactorAction: Action = async (ctx) =>
  userAction(
    ctx,
    'two-factor',
    async (api, call, userId, csrf) => {
      await createResetUserTwoFactor(api)(call, userId, csrf)
    },
    { notice: 'two-factor', invalid: 'The second factor could not be removed.' },
  )

/** POST /admin/user/reset-link `{ csrfToken, id }`: mails the user a password reset link (`sendPasswordResetLink`). */
import type { Action } from '../../../actions/context.js'
import { createSendPasswordResetLink } from '../api/help-user.js'
import { userAction } from './shared.js'

export const sendResetLinkAction: Action = async (ctx) =>
  userAction(
    ctx,
    'reset-link',
    async (api, call, userId, csrf) => {
      await createSendPasswordResetLink(api)(call, userId, csrf)
    },
    { notice: 'reset-link', invalid: 'The link could not be mailed.' },
  )

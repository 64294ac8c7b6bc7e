/** POST /admin/user/sessions `{ csrfToken, id }`: ends every session of the user (`revokeUserSessions`). */
import type { Action } from '../../../actions/context.js'
import { createRevokeUserSessions } from '../api/revoke-user-sessions.js'
import { userAction } from './shared.js'

export const revokeSessionsAction: Action = async (ctx) =>
  userAction(
    ctx,
    'sessions',
    async (api, call, userId, csrf) => {
      await createRevokeUserSessions(api)(call, userId, csrf)
    },
    { notice: 'sessions', invalid: 'The sessions could not be ended.' },
  )

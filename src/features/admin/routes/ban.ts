/** POST /admin/user/ban `{ csrfToken, id, reason?, expiresIn? }`: bans the user (`banUser`); no expiry, until lifted. */
import type { Action } from '../../../actions/context.js'
import { createBanUser } from '../api/ban-user.js'
import { userAction } from './shared.js'

export const banUserAction: Action = async (ctx) =>
  userAction(
    ctx,
    'ban',
    async (api, call, userId, csrf) => {
      const reason = typeof ctx.body.reason === 'string' ? ctx.body.reason.trim() : undefined
      const given = typeof ctx.body.expiresIn === 'string' ? ctx.body.expiresIn : ''
      // Not digits: NaN, which banUser refuses (a TypeError, shown as the form's mistake).
      const expiresIn = given === '' ? undefined : /^\d{1,9}$/.test(given) ? Number(given) : Number.NaN
      await createBanUser(api)(call, userId, { reason, expiresIn, ...csrf })
    },
    { notice: 'banned', invalid: 'Give a reason of at most 500 characters, and a time from the list.' },
  )

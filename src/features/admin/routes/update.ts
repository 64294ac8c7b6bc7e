/** POST /admin/user/update `{ csrfToken, id, name, email, emailVerified? }`: the user's name and address (`updateUser`). */
import { stringValue, type Action } from '../../../actions/context.js'
import { createUpdateUser } from '../api/update-user.js'
import { userAction } from './shared.js'

export const updateUserAction: Action = async (ctx) =>
  userAction(
    ctx,
    'update',
    async (api, call, userId, csrf) => {
      const name = typeof ctx.body.name === 'string' ? ctx.body.name.trim() : undefined
      await createUpdateUser(api)(call, userId, { name, email: stringValue(ctx.body.email) ?? '', emailVerified: ctx.body.emailVerified === 'yes', ...csrf })
    },
    { notice: 'updated', invalid: 'Enter a valid e-mail address, and a name of at most 200 characters.' },
  )

/**
 * POST /admin/user/delete `{ csrfToken, id, confirm: 'yes' }`: deletes the user at once
 * (`deleteUser`), then to the users list. Without the box ticked, the user's page again.
 */
import { assertCsrf, authUrl, stringValue, type Action } from '../../../actions/context.js'
import { createDeleteUser } from '../api/delete-user.js'
import { actionRefusal, adminRequest, postedUserId, userPage } from './shared.js'

export const deleteUserAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const userId = postedUserId(ctx, 'delete')
  if (stringValue(ctx.body.confirm) !== 'yes') return userPage(ctx, userId, 400, { error: 'Tick the box to confirm that the user is to be deleted.' })
  const { api, call } = adminRequest(ctx)
  try {
    await createDeleteUser(api)(call, userId, { csrfToken: stringValue(ctx.body.csrfToken) })
  } catch (error) {
    return actionRefusal(ctx, userId, error, 'The user could not be deleted.')
  }
  return { redirect: `${authUrl(ctx, '/admin')}?notice=deleted` }
}

/**
 * POST /account/delete `{ csrfToken, confirm: 'yes' }`: deletes the signed-in user's account after a
 * recent sign-in (older: to the confirmation page, which comes back to the account page), then to
 * the app's home page, signed out.
 */
import { assertCsrf, stringValue, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { sessionEndedCookies } from '../../../session/strategy.js'
import { accountOf } from '../config.js'
import { deleteUserAccount } from '../delete.js'
import { renderAccount } from './page.js'
import { recentOrConfirm } from './shared.js'

export const deleteAccountAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const account = accountOf(ctx.config)
  const asking = await recentOrConfirm(ctx, account.recentSignInMaxAge, 'POST /account/delete')
  if ('response' in asking) return asking.response
  const { confirmation } = asking
  if (stringValue(ctx.body.confirm) !== 'yes') return renderAccount(ctx, confirmation.userId, 400, { error: 'Tick the box to confirm that you want to delete your account.' })
  await deleteUserAccount(ctx, account, confirmation.userId)
  return { redirect: homeUrl(ctx), cookies: sessionEndedCookies(ctx) }
}

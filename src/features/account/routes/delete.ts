/**
 * POST /account/delete `{ csrfToken, confirm: 'yes' }`: deletes the signed-in user's account after a
 * recent sign-in (older: to the confirmation page, which comes back to the account page), then to
 * the app's home page, signed out.
 */
import { assertCsrf, authUrl, stringValue, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { isRecent } from '../../../session/confirmation.js'
import { sessionEndedCookies } from '../../../session/strategy.js'
import { accountOf } from '../config.js'
import { deleteUserAccount } from '../delete.js'
import { confirmUrl } from '../recent.js'
import { renderAccount } from './page.js'
import { confirmationOrSignIn } from './shared.js'

export const deleteAccountAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const account = accountOf(ctx.config)
  const back = authUrl(ctx, '/account')
  const asking = await confirmationOrSignIn(ctx, back)
  if ('response' in asking) return asking.response
  const { confirmation } = asking
  if (!isRecent(confirmation, account.recentSignInMaxAge, ctx.now)) return { redirect: confirmUrl(ctx, back) }
  if (stringValue(ctx.body.confirm) !== 'yes') return renderAccount(ctx, confirmation.userId, 400, { error: 'Tick the box to confirm that you want to delete your account.' })
  await deleteUserAccount(ctx, account, confirmation.userId)
  return { redirect: homeUrl(ctx), cookies: sessionEndedCookies(ctx) }
}

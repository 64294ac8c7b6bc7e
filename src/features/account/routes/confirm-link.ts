/**
 * Confirming by a mailed link: POST /account/confirm/email `{ csrfToken, callbackUrl }` mails the
 * signed-in user the link and binds it to this browser (rate-limited per user); GET
 * /account/confirm/email `?token&callbackUrl`, opened in that browser with the same user signed in,
 * renews the session's confirmation and goes back to `callbackUrl` (same-site, through the
 * `redirect` callback). Signed out, the link sends the browser to sign in first and back.
 */
import { assertCsrf, authUrl, redirectTarget, type Action } from '../../../actions/context.js'
import { recordConfirmation } from '../../../session/confirmation.js'
import { accountOf } from '../config.js'
import { clearConfirmLink, sendConfirmLink, useConfirmLink } from '../confirm-link.js'
import { AccountError } from '../errors.js'
import { confirmationPage, returnTarget } from './confirm.js'
import { confirmationOrSignIn } from './shared.js'

export const sendConfirmLinkAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const callbackUrl = await returnTarget(ctx)
  const asking = await confirmationOrSignIn(ctx, callbackUrl)
  if ('response' in asking) return asking.response
  const { userId } = asking.confirmation
  let sent: Awaited<ReturnType<typeof sendConfirmLink>>
  try {
    sent = await sendConfirmLink(ctx, accountOf(ctx.config), userId, callbackUrl)
  } catch (error) {
    if (!(error instanceof AccountError)) throw error
    return confirmationPage(ctx, userId, callbackUrl, 400, { error: 'Your account cannot confirm by e-mail here.' })
  }
  if ('retryAfter' in sent) {
    const page = await confirmationPage(ctx, userId, callbackUrl, 429, { error: 'Too many links asked for. Wait a while, then try again.' })
    return { ...page, headers: { ...page.headers, 'Retry-After': String(sent.retryAfter) } }
  }
  const page = await confirmationPage(ctx, userId, callbackUrl, 200, { notice: 'Check your inbox: open the link in this browser within fifteen minutes.' })
  return { ...page, cookies: [...(page.cookies ?? []), ...sent.cookies] }
}

export const confirmByLink: Action = async (ctx) => {
  const token = ctx.query.get('token') ?? ''
  const given = ctx.query.get('callbackUrl')
  const callbackUrl = given === null ? authUrl(ctx, '/account') : await redirectTarget(ctx, given)
  const here = `${authUrl(ctx, '/account/confirm/email')}?${new URLSearchParams({ token, callbackUrl })}`
  const asking = await confirmationOrSignIn(ctx, here)
  if ('response' in asking) return asking.response
  const { userId } = asking.confirmation
  try {
    await useConfirmLink(ctx, userId, token)
  } catch (error) {
    if (!(error instanceof AccountError)) throw error
    ctx.config.logger.debug('AccountConfirmLinkRefused', error.message)
    return confirmationPage(ctx, userId, callbackUrl, 400, { error: 'This link was used already, has expired, or works only in the browser where you asked for it. Confirm here instead.' })
  }
  return { redirect: callbackUrl, cookies: [...(await recordConfirmation(ctx, 'email')), ...clearConfirmLink(ctx)] }
}

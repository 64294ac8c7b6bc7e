/**
 * POST /passkeys/remove `{ csrfToken, id }`: removes one of the signed-in user's passkeys, then back
 * to the passkeys page; refused (the page says why) when it is their last way to sign in. With the
 * `account` option, only after a recent sign-in (else to confirm, and back to the passkeys page).
 */
import { AccountUnlinkError, InvalidRequestError } from '../../../errors.js'
import { signedInUserId } from '../../../session/strategy.js'
import { assertCsrf, authUrl, pageUrl, type Action } from '../../../actions/context.js'
import { recentSignInRefusal } from '../../../actions/sensitive.js'
import { passkeyProvider, passkeysPageUrl, removeOwnPasskey } from './shared.js'

export const removePasskey: Action = async (ctx) => {
  assertCsrf(ctx)
  passkeyProvider(ctx.config)
  const id = ctx.body.id
  if (typeof id !== 'string' || id.length === 0 || id.length > 1024) throw new InvalidRequestError('POST /passkeys/remove needs the id of one of your passkeys.')
  if (!(await signedInUserId(ctx))) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/passkeys') }) }
  const stale = await recentSignInRefusal(ctx, 'POST /passkeys/remove', passkeysPageUrl(ctx))
  if (stale) return stale
  try {
    await removeOwnPasskey(ctx, id, 'POST /passkeys/remove')
  } catch (error) {
    if (error instanceof AccountUnlinkError && (error.code === 'last_sign_in_method' || error.code === 'not_linked')) {
      ctx.config.logger.debug('PasskeyNotRemoved', error.message)
      return { redirect: authUrl(ctx, `/passkeys?error=${error.code}`) }
    }
    throw error
  }
  return { redirect: authUrl(ctx, '/passkeys') }
}

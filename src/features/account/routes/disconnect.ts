/**
 * POST /account/disconnect `{ csrfToken, provider, providerAccountId? }`: unlinks one of the
 * signed-in user's OAuth accounts, never their last way in (`unlinkAccount`'s rule), and back to
 * the account page. ("Connect" is the provider's sign-in itself, posted from the page while signed in.)
 */
import { assertCsrf, authUrl, stringValue, type Action } from '../../../actions/context.js'
import { unlinkAccount } from '../../../actions/unlink.js'
import { AccountUnlinkError, InvalidRequestError } from '../../../errors.js'
import { renderAccount } from './page.js'
import { confirmationOrSignIn } from './shared.js'

const REFUSALS: Partial<Record<AccountUnlinkError['code'], string>> = {
  last_sign_in_method: 'That is your only way to sign in: add another (a password, a passkey, another account) before you disconnect it.',
  not_linked: 'That account is not linked to yours.',
  ambiguous: 'You have several accounts there: choose one.',
}

export const disconnectAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await confirmationOrSignIn(ctx, authUrl(ctx, '/account'))
  if ('response' in asking) return asking.response
  const provider = stringValue(ctx.body.provider)
  if (!provider || provider.length > 255) throw new InvalidRequestError('POST /account/disconnect needs the provider to disconnect.')
  const providerAccountId = stringValue(ctx.body.providerAccountId)
  try {
    const { cookies } = await unlinkAccount(ctx, provider, providerAccountId === undefined ? {} : { providerAccountId })
    return { redirect: authUrl(ctx, '/account'), cookies }
  } catch (error) {
    const refusal = error instanceof AccountUnlinkError ? REFUSALS[error.code] : undefined
    if (refusal === undefined) throw error
    return renderAccount(ctx, asking.confirmation.userId, 400, { error: refusal })
  }
}

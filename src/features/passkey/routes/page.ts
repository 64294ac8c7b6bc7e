/**
 * GET /passkeys: the themed page of the signed-in user's passkeys, a remove button each and an add
 * button (with a code field when the user has the second factor on). With `?callbackUrl=`
 * (same-origin, through the `redirect` callback) it offers "Not now" and goes there after adding one.
 */
import { renderPasskeysPage } from '../pages/passkeys.js'
import { signedInUserId } from '../../../session/strategy.js'
import { authUrl, issueCsrf, pageUrl, redirectTarget, type Action } from '../../../actions/context.js'
import { listUserPasskeys, pageScript, passkeyProvider } from './shared.js'
import { hasFurtherFactor } from '../../../sign-in/further-factor.js'
import { homeUrl } from '../../../actions/home.js'

export const passkeysPage: Action = async (ctx) => {
  const provider = passkeyProvider(ctx.config)
  const userId = await signedInUserId(ctx)
  if (!userId) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/passkeys') }) }
  const passkeys = await listUserPasskeys(ctx.config, userId)
  // Where to go on: after adding one, or "Not now" (the end of a sign-up sends new users here).
  const requested = ctx.query.get('callbackUrl')
  const next = requested ? await redirectTarget(ctx, requested) : undefined
  const csrf = issueCsrf(ctx)
  const html = renderPasskeysPage({
    passkeys,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    providerId: provider.id,
    error: ctx.query.get('error') ?? undefined,
    code: ctx.query.get('code') ?? undefined,
    // The registration is refused without it (callback/passkey.ts): ask for it up front.
    codeRequired: await hasFurtherFactor(ctx, userId),
    next,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
    script: pageScript(ctx),
  })
  return { html, cookies: csrf.cookies, pageScript: authUrl(ctx, '/webauthn.js') }
}

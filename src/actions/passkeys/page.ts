/** GET /passkeys: the themed page of the signed-in user's passkeys, a remove button each and an add button. */
import { renderPasskeysPage } from '../../pages/index.js'
import { signedInUserId } from '../../session/strategy.js'
import { authUrl, issueCsrf, pageUrl, type Action } from '../context.js'
import { listUserPasskeys, pageScript, passkeyProvider } from './shared.js'

export const passkeysPage: Action = async (ctx) => {
  const provider = passkeyProvider(ctx.config)
  const userId = await signedInUserId(ctx)
  if (!userId) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/passkeys') }) }
  const passkeys = await listUserPasskeys(ctx.config, userId)
  const csrf = issueCsrf(ctx)
  const html = renderPasskeysPage({
    passkeys,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    providerId: provider.id,
    error: ctx.query.get('error') ?? undefined,
    code: ctx.query.get('code') ?? undefined,
    theme: ctx.config.theme,
    script: pageScript(ctx),
  })
  return { html, cookies: csrf.cookies, pageScript: authUrl(ctx, '/webauthn.js') }
}

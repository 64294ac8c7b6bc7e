/**
 * GET, POST /callback/:provider: the end of a sign-in, by the feature that serves the provider
 * (`ProviderMethods.callback`), loaded on its first use, so openid-client, the e-mail code and the
 * passkey verification load only when someone signs in with them. Each checks the request its way:
 * a form post its CSRF token, an OAuth return its state and PKCE cookies, a mailed link its token.
 */
import { compositionOf, providerMethods } from '../composition/index.js'
import { tracedAction } from '../telemetry/action.js'
import type { Action, ActionContext } from './context.js'
import { findProvider } from './signin.js'
import { keepRefusedForm } from './signin-form.js'

export const callback = (providerId: string): Action => {
  const run = tracedAction('portcullis.callback', providerId, async (ctx: ActionContext) => {
    const provider = findProvider(ctx, providerId)
    return (await providerMethods(ctx.config, provider.id).callback())(ctx, provider as never)
  })
  return async (ctx) => {
    // A form the app's user typed (credentials, a password) comes back filled in when it is refused;
    // outside the span, so that the span still ends with the refusal.
    const provider = ctx.config.providerById.get(providerId)
    return provider && compositionOf(ctx.config).methods.get(provider.id)?.submit ? keepRefusedForm(ctx, provider, () => run(ctx)) : run(ctx)
  }
}

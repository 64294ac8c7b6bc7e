/**
 * GET /signin: the built-in sign-in page (or a redirect to `pages.signIn`).
 * POST /signin/:provider: CSRF-checked start of a provider's sign-in.
 */
import { compositionOf, providerMethods } from '../composition/index.js'
import { InvalidProviderError } from '../errors.js'
import { logValue } from '../logger.js'
import { renderSignInPage, type SignInPageProvider } from '../pages/index.js'
import { tracedAction } from '../telemetry/action.js'
import { homeUrl } from './home.js'
import { keepRefusedForm, takeRefusedForm } from './signin-form.js'
import { assertCsrf, issueCsrf, pageUrl, resolveCallbackUrl, type Action, type ActionContext } from './context.js'

export const signInPage: Action = async (ctx) => {
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  const error = ctx.query.get('error') ?? undefined
  if (ctx.config.pages.signIn) {
    return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl, error, code: ctx.query.get('code') ?? undefined }), cookies }
  }
  const csrf = issueCsrf(ctx)
  // Read once, whatever the page shows: a refused form is for the page right after it.
  const refused = takeRefusedForm(ctx)
  const { methods } = compositionOf(ctx.config)
  const entries = ctx.config.providers.map((provider) => ({ provider, entry: methods.get(provider.id)?.signInPage?.(ctx, provider as never, callbackUrl) ?? {} }))
  const script = entries.find(({ entry }) => entry.script)?.entry.script
  const html = renderSignInPage({
    providers: entries.map(({ provider, entry }): SignInPageProvider => ({
      id: provider.id,
      name: provider.name,
      type: provider.type,
      // Credentials, passwords and passkeys post straight to their callback; the others start at /signin.
      action: `${ctx.basePath}/${entry.posts ?? 'signin'}/${provider.id}`,
      credentials: entry.credentials as SignInPageProvider['credentials'],
      links: entry.links,
      optionsUrl: entry.optionsUrl,
      conditional: entry.conditional,
    })),
    csrfToken: csrf.token,
    callbackUrl,
    error,
    code: ctx.query.get('code') ?? undefined,
    resendAction: entries.find(({ entry }) => entry.resendAction)?.entry.resendAction,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
    script: script?.page,
    refused: error !== undefined ? refused.form : undefined,
  })
  return { html, cookies: [...cookies, ...csrf.cookies, ...refused.cookies], pageScript: script?.url }
}

/**
 * Starts the sign-in with one provider, as its feature does it (`ProviderMethods.start`): for OAuth
 * and OIDC the redirect to the provider with the check cookies, for e-mail the mailed link and the
 * verify-request page, each loaded on first use. A method without a start (credentials, passwords,
 * passkeys) is submitted to /callback/<id>, so its POST here shows the sign-in page.
 */
export const signInWithProvider = (providerId: string): Action => {
  const run = tracedAction('portcullis.signin', providerId, async (ctx: ActionContext) => {
    assertCsrf(ctx)
    const provider = findProvider(ctx, providerId)
    const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
    const methods = providerMethods(ctx.config, provider.id)
    if (!methods.start) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl, provider: provider.id }), cookies }
    const start = await methods.start()
    const response = await start(ctx, provider as never, { callbackUrl, fields: ctx.body, authorizationParams: authorizationParamsOf(ctx) })
    return { ...response, cookies: [...cookies, ...(response.cookies ?? [])] }
  })
  return async (ctx) => {
    // A sign-in that happens at once (a mailed link) was typed into a form: refused, it comes back
    // filled in; outside the span, so that the span still ends with the refusal.
    const provider = ctx.config.providerById.get(providerId)
    const methods = provider && compositionOf(ctx.config).methods.get(provider.id)
    return provider && methods?.start && methods.signsInAtOnce ? keepRefusedForm(ctx, provider, () => run(ctx)) : run(ctx)
  }
}

/**
 * Extra authorization parameters posted with the sign-in form, as Auth.js's client sends them
 * (`signIn('google', {}, { prompt: 'login' })` puts them in the query of this POST).
 */
function authorizationParamsOf(ctx: ActionContext): URLSearchParams {
  const params = new URLSearchParams(ctx.query)
  params.delete('callbackUrl')
  return params
}

/** The configured provider with this id. @throws InvalidProviderError */
export function findProvider(ctx: Pick<ActionContext, 'config'>, providerId: string) {
  const provider = ctx.config.providerById.get(providerId)
  if (!provider) {
    const known = [...ctx.config.providerById.keys()].join(', ') || 'none'
    throw new InvalidProviderError(`Unknown provider ${logValue(providerId)} (configured: ${known}).`)
  }
  return provider
}

/**
 * GET /signin: the built-in sign-in page (or a redirect to `pages.signIn`).
 * POST /signin/:provider: CSRF-checked start of a provider's sign-in.
 */
import { isPasswordProvider } from '../config/password-provider.js'
import { InvalidProviderError } from '../errors.js'
import { logValue } from '../logger.js'
import { renderSignInPage, type SignInPageProvider } from '../pages/index.js'
import { assertCsrf, authUrl, issueCsrf, pageUrl, resolveCallbackUrl, type Action, type ActionContext } from './context.js'
import { pageScript } from './passkeys/shared.js'
import { keepRefusedForm, takeRefusedForm } from './signin-form.js'
import { homeUrl } from './home.js'

export const signInPage: Action = async (ctx) => {
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  const error = ctx.query.get('error') ?? undefined
  if (ctx.config.pages.signIn) {
    return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl, error, code: ctx.query.get('code') ?? undefined }), cookies }
  }
  const csrf = issueCsrf(ctx)
  // Read once, whatever the page shows: a refused form is for the page right after it.
  const refused = takeRefusedForm(ctx)
  const passkeys = ctx.config.providers.some((provider) => provider.type === 'webauthn')
  const html = renderSignInPage({
    providers: ctx.config.providers.map((provider): SignInPageProvider => ({
      id: provider.id,
      name: provider.name,
      type: provider.type,
      // Credentials and passkeys post straight to their callback; the others start at /signin.
      action: `${ctx.basePath}/${provider.type === 'credentials' || provider.type === 'webauthn' ? 'callback' : 'signin'}/${provider.id}`,
      credentials: provider.type === 'credentials' ? provider.credentials : undefined,
      links: isPasswordProvider(provider) ? passwordLinks(ctx, callbackUrl) : undefined,
      optionsUrl: provider.type === 'webauthn' ? `${ctx.basePath}/webauthn-options/${provider.id}` : undefined,
      conditional: provider.type === 'webauthn' ? provider.enableConditionalUI : undefined,
    })),
    csrfToken: csrf.token,
    callbackUrl,
    error,
    code: ctx.query.get('code') ?? undefined,
    resendAction: ctx.config.providers.some(isPasswordProvider) ? `${ctx.basePath}/verify-email/resend` : undefined,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
    script: passkeys ? pageScript(ctx) : undefined,
    refused: error !== undefined ? refused.form : undefined,
  })
  return { html, cookies: [...cookies, ...csrf.cookies, ...refused.cookies], pageScript: passkeys ? authUrl(ctx, '/webauthn.js') : undefined }
}

/** The password provider's links under its form: forgotten password, and sign-up (keeping where to go after). */
function passwordLinks(ctx: ActionContext, callbackUrl: string): { href: string; label: string }[] {
  return [
    { href: `${ctx.basePath}/forgot-password`, label: 'Forgot your password?' },
    { href: `${ctx.basePath}/signup?${new URLSearchParams({ callbackUrl })}`, label: 'Create an account' },
  ]
}

/**
 * Starts the sign-in with one provider: for OAuth and OIDC, the redirect to the provider's
 * authorization URL with the check cookies (the OAuth code loads here, on first use); for e-mail,
 * the link mailed and the verify-request page (signin-email.ts, also loaded on first use).
 * Credentials and passkeys are submitted to /callback/<id>, so their POST here shows the sign-in page.
 */
export const signInWithProvider =
  (providerId: string): Action =>
  async (ctx) => {
    assertCsrf(ctx)
    const provider = findProvider(ctx, providerId)
    const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
    switch (provider.type) {
      // Their forms post to /callback/<id> (passkeys through the browser's WebAuthn first): the sign-in page.
      case 'credentials':
      case 'webauthn':
        return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl, provider: provider.id }), cookies }
      case 'oauth':
      case 'oidc': {
        const { authorizationRequest } = await loadAuthorize()
        const authorization = await authorizationRequest(ctx, provider, authorizationParamsOf(ctx))
        return { redirect: authorization.url, cookies: [...cookies, ...authorization.cookies] }
      }
      case 'email': {
        const { signInWithEmail } = await loadEmailSignIn()
        const response = await keepRefusedForm(ctx, provider, () => signInWithEmail(ctx, provider, { email: ctx.body.email, callbackUrl }))
        return { ...response, cookies: [...cookies, ...(response.cookies ?? [])] }
      }
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

let authorizeModule: Promise<typeof import('../oauth/authorize.js')> | undefined

/** The OAuth sign-in start, imported on first use and kept (the loader is costly under tsx). */
export function loadAuthorize(): Promise<typeof import('../oauth/authorize.js')> {
  return (authorizeModule ??= import('../oauth/authorize.js'))
}

let emailSignInModule: Promise<typeof import('./signin-email.js')> | undefined

/** The e-mail sign-in start, imported on first use and kept. */
export function loadEmailSignIn(): Promise<typeof import('./signin-email.js')> {
  return (emailSignInModule ??= import('./signin-email.js'))
}

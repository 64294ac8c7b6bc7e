/**
 * The server-side `signIn(provider, options, authorizationParams)` (spec §4.4): from a route handler,
 * the same sign-in as the routes' forms. Credentials and e-mail keep the forms' CSRF rule; an OAuth
 * or OIDC start may come from a link.
 */
import { providerMethods } from '../composition/index.js'
import { pageUrl, redirectTarget, type ActionContext } from '../actions/context.js'
import { failureResponse } from '../actions/failure.js'
import type { ConfiguredProvider } from '../config/types.js'
import type { AuthResponse } from '../http/respond.js'
import { sameOriginUrl } from '../security/redirect.js'
import { assertServerCsrf, finish, serverContext, type Api, type CsrfOptions } from './context.js'

/** Options of the server-side `signIn`; other string keys are the form fields (e.g. credentials). */
export interface SignInOptions extends CsrfOptions {
  /** Default true: end the response with the redirect. False: only set the cookies. */
  redirect?: boolean | undefined
  /** Where to go afterwards (same-origin). Default: the page the request came from, else `/`. */
  redirectTo?: string | undefined
  [field: string]: unknown
}

/** Server-side sign-in: resolves with the URL the user is (or should be) sent to. */
export type SignInFunction = (
  provider?: string,
  options?: SignInOptions,
  authorizationParams?: string | string[][] | Record<string, string> | URLSearchParams,
) => Promise<string>

/** Builds `signIn` for one instance. */
export function createSignIn(api: Api): SignInFunction {
  return async (providerId, options = {}, authorizationParams) => {
    const { req, res, ctx } = serverContext(api, 'signIn()')
    const { redirect = true, redirectTo, csrfToken, skipCsrfCheck, ...fields } = options
    const callbackUrl = await redirectTarget(ctx, redirectTo ?? defaultTarget(ctx))
    const provider = providerId ? api.config.providerById.get(providerId) : undefined
    let response: AuthResponse
    if (provider) {
      try {
        // Credentials and e-mail sign in (or mail) at once, so the request must be the user's own. An
        // OAuth/OIDC start may come from a link, even on another site (`app.get('/login/github', ...)`):
        // its state/PKCE/nonce cookies bind the flow to this browser, and a forged start only sends
        // users to their provider as themselves.
        if (providerMethods(api.config, provider.id).signsInAtOnce) assertServerCsrf(api, ctx, { csrfToken, skipCsrfCheck }, 'signIn()/signOut()')
        response = await signInWith(ctx, provider, callbackUrl, fields, authorizationParams)
      } catch (error) {
        if (!redirect) throw error
        response = failureResponse(error, ctx)
      }
    } else {
      // No provider, or one not configured: the sign-in page, as Auth.js does.
      response = { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl }) }
    }
    return finish(api, req, res, response, redirect)
  }
}

// Default target of server-side sign-in: the page the user came from, if it is ours.
function defaultTarget(ctx: ActionContext): string {
  return sameOriginUrl(ctx.req.headers.referer, ctx.origin) ?? `${ctx.origin}/`
}

/** The sign-in by the provider's feature: a form's fields submitted, a start (OAuth, e-mail), else the sign-in page. */
async function signInWith(
  ctx: ActionContext,
  provider: ConfiguredProvider,
  callbackUrl: string,
  fields: Record<string, unknown>,
  authorizationParams: Parameters<SignInFunction>[2],
): Promise<AuthResponse> {
  const methods = providerMethods(ctx.config, provider.id)
  // Credentials and passwords: the fields as the form would post them.
  if (methods.submit) return (await methods.submit())({ ...ctx, body: { callbackUrl } }, provider as never, fields)
  // Passkeys: the ceremony runs in the browser, from the sign-in page (as Auth.js's server-side signIn does).
  if (!methods.start) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl }) }
  const response = await (await methods.start())(ctx, provider as never, { callbackUrl, fields, authorizationParams })
  // E-mail mails the link and goes to the verify-request page; an OAuth redirect remembers where to come back to.
  if (methods.signsInAtOnce) return response
  const callbackCookie = ctx.cookieSet.cookies.callbackUrl
  return { ...response, cookies: [{ name: callbackCookie.name, value: callbackUrl, options: callbackCookie.options }, ...(response.cookies ?? [])] }
}

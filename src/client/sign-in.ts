import { authUrl, postForm } from './config.js'
import { getCsrfToken } from './csrf.js'
import { navigate, submitForm } from './navigate.js'
import { getProviders } from './providers.js'
import { resultOf } from './result.js'
import { announceSessionChange } from './session-change.js'
import type { SignInResult } from './types.js'

/**
 * Options of `signIn`. Every other key is a form field the provider reads: `email` for e-mail
 * sign-in, the credentials `authorize` takes (`username`, `password`, …).
 */
export interface SignInOptions {
  /** Where to go after signing in (a path or a URL of this site). Default: this page. */
  callbackUrl?: string
  /**
   * `false`: stay on the page and resolve with the result (OAuth: with the provider's
   * authorization URL, to go to when you choose). Default `true`: go where the server says.
   */
  redirect?: boolean
  [field: string]: string | boolean | undefined
}

/** Extra parameters for an OAuth provider's authorization request (`prompt`, `login_hint`, …). */
export type AuthorizationParams = string | URLSearchParams | Record<string, string> | [string, string][]

/**
 * Signs in with a provider.
 *
 * - OAuth and OIDC: a form POST to `/signin/:provider` with the CSRF token takes the page to the
 *   provider; the user comes back to `callbackUrl`.
 * - E-mail (`{ email }`) and credentials (the fields of `authorize`): a `fetch` with the CSRF token;
 *   the server answers `{ url, error, code }`. With `redirect: false` the page stays and the
 *   promise gives the result; else the page goes to `url` (the verify-request page, the
 *   callback URL, or the sign-in page showing the error).
 * - No provider: the page goes to the server's sign-in page.
 * - A provider the server does not offer: `{ ok: false, status: 400, error: 'InvalidProvider' }`.
 *
 * A successful credentials sign-in tells `onSessionChange` listeners, in this tab and the others.
 *
 * @param provider A provider id, as `getProviders()` lists them.
 * @param options `callbackUrl`, `redirect`, and the form fields.
 * @param authorizationParams For OAuth and OIDC: sent to the provider with the authorization request.
 * @returns The result; `undefined` when the page is leaving.
 * @throws AuthClientError when the server could not be reached or gave no JSON.
 * @example
 * const result = await signIn('credentials', { username: 'ada', password, redirect: false })
 * if (!result.ok) show(result.error === 'CredentialsSignin' ? 'Wrong username or password' : 'Try again later')
 */
export async function signIn(provider: string, options: SignInOptions & { redirect: false }, authorizationParams?: AuthorizationParams): Promise<SignInResult>
export async function signIn(provider?: string, options?: SignInOptions, authorizationParams?: AuthorizationParams): Promise<SignInResult | undefined>
export async function signIn(provider?: string, options: SignInOptions = {}, authorizationParams?: AuthorizationParams): Promise<SignInResult | undefined> {
  const { callbackUrl = location.href, redirect = true, ...rest } = options
  if (provider === undefined) {
    navigate(`${authUrl('/signin')}?${new URLSearchParams({ callbackUrl })}`)
    return undefined
  }
  const found = (await getProviders())[provider]
  if (!found) return { ok: false, status: 400, url: null, error: 'InvalidProvider' }

  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(rest)) if (value !== undefined) fields[name] = String(value)
  fields.callbackUrl = callbackUrl
  fields.csrfToken = await getCsrfToken()
  const query = new URLSearchParams(authorizationParams).toString()
  const route = authUrl(`/${found.type === 'credentials' ? 'callback' : 'signin'}/${encodeURIComponent(provider)}`) + (query ? `?${query}` : '')

  if ((found.type === 'oauth' || found.type === 'oidc') && redirect) {
    submitForm(route, fields)
    return undefined
  }
  const answer = await postForm(route, fields)
  const result = resultOf(answer)
  if (result.ok && found.type === 'credentials') await announceSessionChange()
  if (redirect && answer.url) {
    navigate(answer.url)
    return undefined
  }
  return result
}

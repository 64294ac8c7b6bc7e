/**
 * GET /signup: the sign-up page. POST /signup `{ csrfToken, email, password, name?, username?, callbackUrl? }`:
 * CSRF-checked and rate-limited; a new account gets a verification link, a taken address a mail to
 * its owner, and both the same "check your e-mail" answer (src/features/password/accounts.ts).
 */
import { DEFAULT_USERNAME_HINT, renderSignUpPage, type SignUpPageProps } from '../pages/password.js'
import type { PasswordProvider } from '../provider.js'
import type { AuthResponse } from '../../../http/respond.js'
import { actionPath, assertCsrf, issueCsrf, resolveCallbackUrl, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { formRefusal, loadAccounts, passwordProvider, signInUrl } from './shared.js'
import { homeUrl } from '../../../actions/home.js'
import { PasswordBusyError } from '../errors.js'
import { asBusy, busyMessage } from './busy.js'

export const signUpPage: Action = async (ctx) => page(ctx, 200)

export const signUpAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const provider = passwordProvider(ctx.config)
  const { url: callbackUrl } = await resolveCallbackUrl(ctx)
  try {
    const { signUp } = await loadAccounts()
    return await signUp(ctx, provider, { email: ctx.body.email, password: ctx.body.password, name: ctx.body.name, username: ctx.body.username, callbackUrl })
  } catch (error) {
    if (error instanceof PasswordBusyError) return asBusy(await page(ctx, 503, busyMessage(error)), error)
    const refusal = formRefusal(error)
    if (refusal === undefined) throw error
    return page(ctx, 400, refusal)
  }
}

async function page(ctx: ActionContext, status: number, error?: string): Promise<AuthResponse> {
  const provider = passwordProvider(ctx.config)
  const { url: callbackUrl, cookies } = await resolveCallbackUrl(ctx)
  const csrf = issueCsrf(ctx)
  const html = renderSignUpPage({
    action: actionPath(ctx, '/signup'),
    csrfToken: csrf.token,
    callbackUrl,
    error,
    email: stringValue(ctx.body.email),
    name: stringValue(ctx.body.name),
    username: usernameField(provider, stringValue(ctx.body.username)),
    minLength: provider.password.minLength,
    maxLength: provider.password.maxLength,
    signInUrl: signInUrl(ctx),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: [...cookies, ...csrf.cookies] }
}

/** The sign-up page's username field, when the provider has usernames. */
function usernameField(provider: PasswordProvider, value: string | undefined): SignUpPageProps['username'] {
  const settings = provider.password.usernames
  if (!settings) return undefined
  return { value, required: settings.required, maxLength: settings.maxLength, hint: settings.defaultPattern ? DEFAULT_USERNAME_HINT : undefined }
}

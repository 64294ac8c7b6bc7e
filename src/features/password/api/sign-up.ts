/**
 * The server-side `signUp(req, { email, password, name?, username? })`: the sign-up of the password provider
 * from the app's own form, as POST /signup does it (CSRF-checked, rate-limited, the same outcome
 * for a new and a taken address: a mail either way, never an error that tells them apart).
 */
import { loadAccounts, passwordProvider } from '../routes/shared.js'
import { redirectTarget } from '../../../actions/context.js'
import { appendCookies } from '../../../http/respond.js'
import { assertServerCsrf, type Api, type CsrfOptions } from '../../../api/context.js'
import { passwordCall, type PasswordCallContext } from './context.js'

/** What `signUp()` takes. */
export interface SignUpOptions extends CsrfOptions {
  email: string
  password: string
  name?: string | undefined
  /** The username asked for (the `usernames` option). A taken one is not an error: the mail says so. */
  username?: string | undefined
  /** Where the verification link leads once it signed the user in (same-origin). Default: the site's root. */
  redirectTo?: string | undefined
}

/**
 * Signs up with the password provider: a new account gets a verification link, a taken address a
 * mail to its owner. Resolves the same way for both; the app shows "check your e-mail". On `res`
 * (or Express's `req.res`) it sets the cookie that lets the link sign in at once in this browser.
 *
 * @throws PasswordPolicyError (`code`: too_short, too_long, common, breached), UsernameError (the
 *   rules only, never `taken`), EmailSignInError (not an address), RateLimitedError, MissingCSRFError,
 *   UnknownActionError (no password provider)
 * @example
 * ```ts
 * app.post('/join', express.urlencoded({ extended: false }), async (req, res) => {
 *   try {
 *     await signUp(req, { email: req.body.email, password: req.body.password, csrfToken: req.body.csrfToken })
 *   } catch (error) {
 *     if (error instanceof PasswordPolicyError) return res.status(400).render('join', { error: error.message })
 *     throw error
 *   }
 *   res.render('check-your-mail')
 * })
 * ```
 */
export type SignUpFunction = (req: PasswordCallContext, options: SignUpOptions) => Promise<void>

export function createSignUp(api: Api): SignUpFunction {
  return async (given, options) => {
    const call = passwordCall(api, given, 'signUp()')
    assertServerCsrf(api, call.ctx, options, 'signUp()')
    const provider = passwordProvider(api.config)
    const callbackUrl = await redirectTarget(call.ctx, options.redirectTo ?? `${call.ctx.origin}/`)
    const { signUp } = await loadAccounts()
    const response = await signUp(call.ctx, provider, { email: options.email, password: options.password, name: options.name, username: options.username, callbackUrl })
    if (call.res && !call.res.headersSent) appendCookies(call.res, response.cookies ?? [])
  }
}

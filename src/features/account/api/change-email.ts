/**
 * The server-side `changeEmail(req, { newEmail })`: mails the new address the link that changes the
 * signed-in user's address, after a recent sign-in or confirmation.
 */
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { callerPage } from '../../../actions/sensitive.js'
import { appendCookies } from '../../../http/respond.js'
import { accountOf } from '../config.js'
import { assertRecentSignIn } from '../recent.js'

/** What `changeEmail()` takes. */
export interface ChangeEmailOptions extends CsrfOptions {
  /** The address to move the account to. */
  newEmail: string
  /** Seconds the last sign-in or confirmation counts as recent. Default: `account.recentSignInMaxAge` (600). */
  maxAge?: number | undefined
}

/**
 * Mails `newEmail` a link (single use, stored hashed, one hour) that changes the signed-in user's
 * address when they open it signed in; nothing changes before. With `account.emailChangeBy` `'code'`
 * or `'both'`, a six-digit code instead or beside, typed in this browser (its cookie is set on `res`,
 * so pass `{ req, res }`) and posted to `POST /api/auth/account/email/code`. An address that is another user's
 * gets a notice instead, and the call resolves the same (no enumeration). Once changed, the old
 * address is told, with a link that undoes it for seven days. CSRF-checked.
 *
 * @throws MissingCSRFError; AccountError `not_signed_in`, `invalid_email`, `same_email`;
 *   RecentSignInRequiredError; AdapterError; InvalidConfigurationError when `account` is off
 * @example
 * ```ts
 * app.post('/settings/email', express.urlencoded({ extended: false }), async (req, res) => {
 *   await changeEmail(req, { newEmail: req.body.email, csrfToken: req.body.csrfToken })
 *   res.send('Check the inbox of the new address.')
 * })
 * ```
 */
export type ChangeEmailFunction = (req: SessionsCallContext, options: ChangeEmailOptions) => Promise<void>

export function createChangeEmail(api: Api): ChangeEmailFunction {
  return async (given, options) => {
    const { req, res } = givenRequest(given, 'changeEmail()')
    const account = accountOf(api.config)
    const ctx = actionContext(api, req)
    assertServerCsrf(api, ctx, options, 'changeEmail()')
    const confirmation = await assertRecentSignIn(ctx, options.maxAge ?? account.recentSignInMaxAge, 'changeEmail()', callerPage(ctx))
    // The change's code (and the mail's) loads on the first change, never on the session-read path.
    const { requestEmailChange } = await import('../email-change.js')
    // With codes on, this browser holds what binds the code to it: a cookie on the response.
    if (account.emailChangeBy !== 'link' && (!res || res.headersSent)) {
      throw new TypeError('changeEmail(): with account.emailChangeBy "code" or "both", pass { req, res }: the code is bound to this browser by a cookie.')
    }
    const { cookies } = await requestEmailChange(ctx, account, confirmation.userId, options.newEmail)
    if (res && cookies.length > 0) appendCookies(res, cookies)
  }
}

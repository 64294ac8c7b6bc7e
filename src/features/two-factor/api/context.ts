/**
 * What the second factor's server-side functions share (enroll-totp.ts, verify-totp.ts,
 * disable-totp.ts, regenerate-recovery-codes.ts): the request they are called on, the check that
 * `twoFactor` is on, the CSRF rule of the state-changing ones, and the signed-in user.
 */
import type { ActionContext } from '../../../actions/context.js'
import { assertRecentSignInIfRequired, callerPage } from '../../../actions/sensitive.js'
import { assertTwoFactor, loadFactor, signedInUser } from '../routes/shared.js'
import { TwoFactorError } from '../../../errors.js'
import type { AdapterUser } from '../../../types.js'
import { actionContext, assertServerCsrf, givenRequest, type Api, type CsrfOptions } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'

/** The request, or `{ req, res }` (as for the session list's functions). */
export type TwoFactorCallContext = SessionsCallContext

/** What the code-taking functions are given. */
export interface TwoFactorCodeOptions extends CsrfOptions {
  /** Six digits from the app, or (but for confirming an enrolment) a recovery code. */
  code: string
}

/**
 * The call on `given` for the signed-in user, with the second factor's operations.
 * @param csrf Check the CSRF token (the state-changing functions) with these options.
 * @throws TypeError (not a request), UnknownActionError (`twoFactor` off), MissingCSRFError,
 *   TwoFactorError `not_signed_in`
 */
export async function twoFactorCall(
  api: Api,
  given: unknown,
  what: string,
  csrf?: CsrfOptions,
): Promise<{ ctx: ActionContext; user: AdapterUser; factor: Awaited<ReturnType<typeof loadFactor>> }> {
  const { req } = givenRequest(given, what)
  assertTwoFactor(api.config)
  const ctx = actionContext(api, req)
  if (csrf) assertServerCsrf(api, ctx, csrf, what)
  const user = await signedInUser(ctx)
  if (!user) throw new TwoFactorError('not_signed_in', `${what}: nobody is signed in on this request.`)
  return { ctx, user, factor: await loadFactor() }
}

/**
 * With the `account` option: a recent sign-in, before a change of the factor (enrolling, new
 * recovery codes, turning it off; docs/account.md).
 * @throws RecentSignInRequiredError, its `url` the confirmation page coming back to the caller's page
 */
export function assertRecentForChange(ctx: ActionContext, what: string): Promise<void> {
  return assertRecentSignInIfRequired(ctx, what, callerPage(ctx))
}

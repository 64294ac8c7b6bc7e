/**
 * Whether the request's session was signed in or confirmed recently enough for a sensitive action,
 * from the record the core keeps with the session (session/confirmation.ts), and where the user
 * confirms who they are when it was not: this wing's confirmation page, which sends them back.
 */
import { authUrl, pageUrl, type ActionContext } from '../../actions/context.js'
import { assertNotImpersonating } from '../../actions/sensitive.js'
import { RecentSignInRequiredError } from '../../errors.js'
import { isRecent, readConfirmation, type SessionConfirmation } from '../../session/confirmation.js'
import { AccountError } from './errors.js'

/** The answer of `requireRecentSignIn`. */
export type RecentSignIn =
  | {
      readonly recent: true
      readonly userId: string
      /** When the session was signed in or last confirmed. */
      readonly confirmedAt: Date
      /** How: the sign-in's provider id, or the confirmation's method (`password`, `two-factor`, …). */
      readonly confirmedWith: string | null
    }
  | {
      readonly recent: false
      /** False when nobody is signed in: `url` is then the sign-in page. */
      readonly signedIn: boolean
      /** Where the user confirms (or signs in) and comes back to `returnTo`. */
      readonly url: string
    }

/**
 * Reads the session's record and judges it against `maxAge` (seconds).
 * @param returnTo Where the confirmation page sends the user back (a same-site URL).
 */
export async function checkRecentSignIn(ctx: ActionContext, maxAge: number, returnTo: string): Promise<RecentSignIn> {
  const confirmation = await readConfirmation(ctx)
  if (!confirmation) return { recent: false, signedIn: false, url: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: returnTo }) }
  if (isRecent(confirmation, maxAge, ctx.now)) {
    return { recent: true, userId: confirmation.userId, confirmedAt: new Date(confirmation.confirmedAt * 1000), confirmedWith: confirmation.confirmedWith }
  }
  return { recent: false, signedIn: true, url: confirmUrl(ctx, returnTo) }
}

/** The confirmation page, sending the user back to `returnTo`. */
export function confirmUrl(ctx: Pick<ActionContext, 'origin' | 'basePath'>, returnTo: string): string {
  return `${authUrl(ctx, '/account/confirm')}?${new URLSearchParams({ callbackUrl: returnTo })}`
}

/**
 * The request's session's record, for a server-side sensitive call (`what`), when it is recent.
 * @param returnTo Where the confirmation page of the error's `url` sends the user back; without it the error has no `url`.
 * @throws AccountError `not_signed_in`; RecentSignInRequiredError; ImpersonatingError (an administrator's impersonation changes no credential)
 */
export async function assertRecentSignIn(ctx: ActionContext, maxAge: number, what: string, returnTo?: string): Promise<SessionConfirmation> {
  const confirmation = await readConfirmation(ctx)
  if (!confirmation) throw new AccountError('not_signed_in', `${what}: nobody is signed in on this request.`)
  await assertNotImpersonating(ctx, what)
  assertRecent(ctx, confirmation, maxAge, what, returnTo)
  return confirmation
}

/**
 * The `sensitiveAction` hook of the other wings' sensitive actions (changing the password, the
 * second factor, the passkeys): `account.recentSignInMaxAge` applies to them as to this wing's.
 * Signed out it does nothing: the action refuses that itself, with its own error.
 * @throws RecentSignInRequiredError, its `url` the confirmation page coming back to `returnTo`
 */
export async function requireRecentFor(ctx: ActionContext, maxAge: number, what: string, returnTo: string): Promise<void> {
  const confirmation = await readConfirmation(ctx)
  if (confirmation) assertRecent(ctx, confirmation, maxAge, what, returnTo)
}

function assertRecent(ctx: ActionContext, confirmation: SessionConfirmation, maxAge: number, what: string, returnTo: string | undefined): void {
  if (isRecent(confirmation, maxAge, ctx.now)) return
  const age = confirmation.confirmedAt > 0 ? ctx.now - confirmation.confirmedAt : Infinity
  const url = returnTo === undefined ? undefined : confirmUrl(ctx, returnTo)
  throw new RecentSignInRequiredError(
    `${what}: the session was last confirmed ${Number.isFinite(age) ? `${age} s ago` : 'never'}, more than ${maxAge} s: send the user to confirm first (${url ?? 'requireRecentSignIn()'}).`,
    { age, maxAge, url },
  )
}

/** What the account routes share: who is asking, and the ways they can confirm who they are. */
import { authUrl, pageUrl, type ActionContext } from '../../../actions/context.js'
import { failureResponse } from '../../../actions/failure.js'
import { assertNotImpersonating } from '../../../actions/sensitive.js'
import { hooksOf, type ConfirmationMethod } from '../../../composition/index.js'
import type { AuthResponse } from '../../../http/respond.js'
import { isRecent, readConfirmation, type SessionConfirmation } from '../../../session/confirmation.js'
import { confirmUrl } from '../recent.js'
import type { ConfirmationRoundTrip } from '../pages/confirm.js'

/** The second factor's code, when the user has one (the two-factor wing's hooks check it). */
export const SECOND_FACTOR: ConfirmationMethod = { method: 'two-factor', label: 'Code from your authenticator app', field: 'code', input: 'one-time-code' }

/** The request's session's record, or the response that sends a signed-out visitor to sign in (and back to `back`). */
export async function confirmationOrSignIn(ctx: ActionContext, back: string): Promise<{ confirmation: SessionConfirmation } | { response: AuthResponse }> {
  const confirmation = await readConfirmation(ctx)
  if (confirmation) return { confirmation }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: back }) } }
}

/** The typed ways `userId` can confirm: the features' (a password), and a second-factor code. */
export async function typedMethods(ctx: ActionContext, userId: string): Promise<ConfirmationMethod[]> {
  const methods: ConfirmationMethod[] = []
  for (const hook of hooksOf(ctx.config, 'confirmationMethods')) methods.push(...(await hook(ctx, userId)))
  for (const hook of hooksOf(ctx.config, 'hasFurtherFactor')) {
    if (await hook(ctx, userId)) {
      methods.push(SECOND_FACTOR)
      break
    }
  }
  return methods
}

/**
 * The new sign-ins that confirm `userId`: each OAuth account of theirs whose provider is configured
 * (its sign-in comes back to `callbackUrl` as the same user), and the sign-in page when they have a passkey.
 */
export async function roundTrips(ctx: ActionContext, userId: string, callbackUrl: string): Promise<ConfirmationRoundTrip[]> {
  const accounts = (await ctx.config.adapter?.getAccountsByUserId?.(userId)) ?? []
  const trips: ConfirmationRoundTrip[] = []
  const seen = new Set<string>()
  for (const account of accounts) {
    const provider = ctx.config.providerById.get(account.provider)
    if (!provider || seen.has(provider.id)) continue
    seen.add(provider.id)
    if (account.type === 'oauth' || account.type === 'oidc') {
      trips.push({ label: `Sign in again with ${provider.name}`, href: new URL(authUrl(ctx, `/signin/${encodeURIComponent(provider.id)}`)).pathname, post: true })
    } else if (account.type === 'webauthn') {
      trips.push({ label: 'Sign in again with a passkey', href: pageUrl(ctx, 'signIn', '/signin', { callbackUrl }), post: false })
    }
  }
  return trips
}

/**
 * For a sensitive route: the record of a session signed in or confirmed within `maxAge`, or the
 * response that sends the user to sign in, or to confirm and come back to the account page, or
 * the error page of an impersonation (which changes no credential).
 */
export async function recentOrConfirm(ctx: ActionContext, maxAge: number, what: string): Promise<{ confirmation: SessionConfirmation } | { response: AuthResponse }> {
  const back = authUrl(ctx, '/account')
  const asking = await confirmationOrSignIn(ctx, back)
  if ('response' in asking) return asking
  try {
    await assertNotImpersonating(ctx, what)
  } catch (error) {
    return { response: failureResponse(error, ctx) }
  }
  if (isRecent(asking.confirmation, maxAge, ctx.now)) return asking
  return { response: { redirect: confirmUrl(ctx, back) } }
}

/**
 * Sign-in with a credentials provider: `authorize` checks the submitted fields, the `signIn`
 * callback may veto, then a new session starts: a sealed JWT cookie, or, with database sessions,
 * a session row for the adapter's user with that id (Auth.js refuses this combination; we support
 * it). Used by POST /callback/:id (after its CSRF check) and by the server-side `signIn()`.
 */

import { AccessDeniedError, AuthError, CallbackRouteError, CredentialsSignin } from '../../../errors.js'
import { describeError, emitEvent, redactError } from '../../../events.js'
import type { AuthResponse } from '../../../http/respond.js'
import type { CredentialsProvider } from '../../../providers/credentials.js'
import { credentialsIdentifier, limitSignInAttempt } from '../../../security/rate-limit.js'
import { finishSignIn } from '../../../sign-in/finish.js'
import type { Account, AdapterUser, SecondFactorProof, User } from '../../../types.js'
import { redirectTarget, resolveCallbackUrl, type ActionContext } from '../../../actions/context.js'
import { assertFormPost } from '../form.js'
import { afterFirstFactor } from '../../../sign-in/further-factor.js'

/** Fields of the form that are Portcullis's, not the provider's. */
const CONTROL_FIELDS = new Set(['csrfToken', 'callbackUrl', 'redirect', 'redirectTo'])

/** POST /callback/:id: the sign-in form, CSRF-checked. */
export async function credentialsCallback(ctx: ActionContext, provider: CredentialsProvider): Promise<AuthResponse> {
  assertFormPost(ctx, provider)
  return signInWithCredentials(ctx, provider, ctx.body)
}

/**
 * Runs the credentials sign-in and answers with the session cookie and a redirect to the callback URL.
 *
 * @throws CredentialsSignin when `authorize` refuses; AccessDeniedError when the `signIn` callback does;
 *   RateLimitedError when the client's address or the identifier tried has no attempts left (`rateLimit`).
 */
export async function signInWithCredentials(ctx: ActionContext, provider: CredentialsProvider, fields: Record<string, unknown>): Promise<AuthResponse> {
  const credentials = Object.fromEntries(Object.entries(fields).filter(([key]) => !CONTROL_FIELDS.has(key)))
  // Counted before authorize runs (atomically, so parallel guesses cannot slip past the limit); a
  // success clears the identifier's failures.
  const attempt = await limitSignInAttempt(ctx, provider, credentialsIdentifier(ctx.config, provider, credentials))
  const user = await authorize(ctx, provider, credentials)
  await attempt.succeeded()
  // An enrolled user gives a second factor first (features/two-factor/pending.ts); the password fields stay here.
  const pending = await afterFirstFactor(ctx, user.id, { kind: 'credentials', pid: provider.id, user, fields: withoutSecrets(provider, credentials) })
  return pending ?? completeCredentialsSignIn(ctx, provider, user, credentials)
}

/**
 * The credentials sign-in once its factors are checked: the `signIn` callback, the session, the
 * event, the redirect. Also where the second page resumes it.
 */
export async function completeCredentialsSignIn(
  ctx: ActionContext,
  provider: CredentialsProvider,
  user: User & { id: string },
  credentials: Record<string, unknown>,
  twoFactor?: SecondFactorProof,
): Promise<AuthResponse> {
  const account: Account = { providerAccountId: user.id, type: 'credentials', provider: provider.id }
  const allowed = ctx.config.callbacks.signIn ? await ctx.config.callbacks.signIn({ user, account, credentials, ...(twoFactor && { twoFactor }) }) : true
  if (allowed === false) throw new AccessDeniedError()
  if (typeof allowed === 'string') return { redirect: await redirectTarget(ctx, allowed) }

  const sessionUser = ctx.config.session.strategy === 'database' ? await storedUser(ctx, provider, user) : user
  // The session, the features' steps after it (an account's restore), the event, the redirect.
  return finishSignIn(ctx, { user: sessionUser, account, isNewUser: false })
}

/**
 * The submitted fields without the secret ones, for the pending sign-in's cookie: those the provider
 * declares with `type: 'password'`, and any whose name says password, passcode, pin, secret or code.
 */
function withoutSecrets(provider: CredentialsProvider, credentials: Record<string, unknown>): Record<string, unknown> {
  const declared = Object.entries(provider.credentials ?? {})
  const secret = new Set(declared.filter(([, field]) => field?.type === 'password').map(([name]) => name))
  return Object.fromEntries(Object.entries(credentials).filter(([key]) => !secret.has(key) && !/pass|pin|secret|code|otp/i.test(key)))
}

async function authorize(ctx: ActionContext, provider: CredentialsProvider, credentials: Record<string, unknown>): Promise<User & { id: string }> {
  let user: User | null
  try {
    user = await provider.authorize!(credentials, ctx.req)
  } catch (error) {
    if (error instanceof AuthError) throw error
    // A bug or an outage in the app's authorize is the server's problem, not a wrong password. The
    // error is often the database's (the README's authorize calls the adapter), whose message and
    // properties hold the query's values: the e-mail, the password. Only a redacted copy goes on.
    const cause = redactError(error, [credentials])
    throw new CallbackRouteError(`authorize() of the "${provider.id}" provider threw: ${describeError(cause)}`, { cause })
  }
  if (!user || typeof user !== 'object') throw new CredentialsSignin()
  // Auth.js gives a user without an id a random one; the session always needs `user.id`.
  const id = user.id === undefined || user.id === null ? crypto.randomUUID() : String(user.id)
  return { ...user, id }
}

/**
 * With database sessions the session row points at a user row: `authorize` must return a user
 * that is in the database (credentials sign-in never creates users).
 */
async function storedUser(ctx: ActionContext, provider: CredentialsProvider, user: User & { id: string }): Promise<AdapterUser> {
  // resolveConfig checked that the adapter has getUser when credentials meet database sessions.
  const stored = await ctx.config.adapter!.getUser!(user.id)
  if (stored) return stored
  throw new CallbackRouteError(
    `authorize() of the "${provider.id}" provider returned a user (id "${user.id}") that is not in the database. ` +
      'With database sessions, return the stored user, e.g. `await adapter.getUserByEmail(email)`, after checking the password.',
  )
}

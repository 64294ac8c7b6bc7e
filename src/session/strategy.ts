/**
 * The session strategy chosen at init (`jwt` or `database`), behind one set of functions: the
 * routes and `auth()` read, start and end sessions without knowing where they live.
 *
 * @see spec/auth-library-spec.md §2.2, §5.4
 */
import { emitEvent } from '../events.js'
import type { Account, AdapterUser, JWT, User } from '../types.js'
import { expiredCookie, type OutgoingCookie } from './cookies.js'
import type { SessionRequest, SessionResult, SignInDetails } from './types.js'
import { createDatabaseSession, endDatabaseSession, peekDatabaseSession, readDatabaseSession } from './database-strategy.js'
import { clearJwtSession, createJwtSession, peekJwtToken, readJwtSession } from './jwt-strategy.js'
import { forgetChecks, sessionIdOf, sessionStands } from './revocation.js'
import { actorOf } from './actor.js'
import type { SessionStore } from './store/types.js'

/**
 * The session of a request, and the cookies to send back (none in the common case). A JWT session
 * read that runs no app code and re-issues nothing answers synchronously (see readJwtSession).
 */
export function readSession(request: SessionRequest, update?: { data: unknown }): SessionResult | Promise<SessionResult> {
  return request.config.session.strategy === 'database' ? readDatabaseSession(request, update) : readJwtSession(request, update)
}

/**
 * Starts a session after a successful sign-in.
 *
 * @param user With database sessions, the adapter's user (its `id` is the session row's `userId`).
 * @returns Its cookies, and the CSRF cookie rotated.
 */
export async function startSession(request: SessionRequest, user: User | AdapterUser, account: Account | null, details?: SignInDetails): Promise<OutgoingCookie[]> {
  const started =
    request.config.session.strategy === 'database'
      ? await createDatabaseSession(request, user as AdapterUser, account?.provider, details?.impersonation)
      : await createJwtSession(request, user, account, { ...details, method: account?.provider })
  return [...started, ...rotateCsrf(request)]
}

/** Cookies that end the request's session in this browser (its row or record already gone), and rotate the CSRF token. */
export function sessionEndedCookies(request: SessionRequest): OutgoingCookie[] {
  return [...clearJwtSession(request), ...rotateCsrf(request)]
}

/**
 * A new CSRF token after every sign-in and sign-out: the one a page (or an attacker who planted a
 * pair) held before does not carry over. The next page or GET /csrf issues a fresh one.
 */
function rotateCsrf(request: SessionRequest): OutgoingCookie[] {
  const cookie = request.cookieSet.cookies.csrfToken
  return request.requestCookies[cookie.name] === undefined ? [] : [expiredCookie(cookie)]
}

/**
 * The id of the user the request is signed in as, without touching cookies: an OAuth sign-in links
 * the new account to this user. `null` when signed out or expired, or when the `jwt` callback ends
 * the session as it would for `auth()`.
 */
export async function signedInUserId(request: SessionRequest): Promise<string | null> {
  if (request.config.session.strategy === 'database') return (await peekDatabaseSession(request))?.userId ?? null
  const token = await peekJwtToken(request)
  const sub = token?.sub
  if (typeof sub !== 'string' || !sub) return null
  // An ended session (signed out, revoked) links nothing: a copied cookie must not attach an account.
  const store = request.config.session.store
  if (store && !(await sessionStands(request.config, store, token!, request.now * 1000))) return null
  // Nor does one the app ends in its jwt callback (its own revocation): auth() says nobody is signed in.
  const { jwt } = request.config.callbacks
  if (!jwt) return sub
  const checked = await jwt({ token: token! })
  return checked && typeof checked.sub === 'string' && checked.sub ? checked.sub : null
}

async function endStoredSession(config: SessionRequest['config'], store: SessionStore, token: JWT, now: number): Promise<void> {
  const userId = token.sub as string
  const sid = sessionIdOf(token)
  if (sid) {
    await store.deleteSessions(userId, { only: sid })
    forgetChecks(config, [sid])
    return
  }
  // A token from before the store has no record to delete: refuse the user's tokens like it.
  await store.setValidAfter(userId, now * 1000 + 1000, config.jwt.maxAge * 1000)
  forgetChecks(config, [], userId)
}

/**
 * The administrator acting as the request's signed-in user (a session an impersonation started),
 * or null: the user's own session, or nobody signed in. Without cookies, callbacks or extension.
 */
export async function impersonatorOf(request: SessionRequest): Promise<string | null> {
  if (!request.config.sessionReadWith?.with?.includes('impersonatedBy')) return null
  if (request.config.session.strategy === 'database') return (await peekDatabaseSession(request))?.impersonatedBy ?? null
  const token = await peekJwtToken(request)
  return (token && actorOf(token)?.sub) ?? null
}

/** Ends the request's session (deleting a database session's row), emits `signOut`, and returns the cookies that clear it. */
export async function endSession(request: SessionRequest): Promise<OutgoingCookie[]> {
  const { config } = request
  if (config.session.strategy === 'database') {
    const { session, cookies } = await endDatabaseSession(request)
    await emitEvent(config, 'signOut', { session })
    return [...cookies, ...rotateCsrf(request)]
  }
  const token = await peekJwtToken(request)
  // With a store the session ends everywhere: its record goes, so a copy of the cookie stops
  // working too. When the store fails, so does the sign-out (AdapterError), the cookie kept.
  if (token && config.session.store && typeof token.sub === 'string') await endStoredSession(config, config.session.store, token, request.now)
  await emitEvent(config, 'signOut', { token })
  return [...clearJwtSession(request), ...rotateCsrf(request)]
}

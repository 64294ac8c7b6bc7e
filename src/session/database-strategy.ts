/**
 * Database sessions: the cookie holds only an opaque session token; the session row (and its
 * user) come from the adapter in one query. The row's expiry is pushed forward at most once per
 * `updateAge`, so a steady stream of requests costs one read each and a write a day.
 *
 * @see spec/auth-library-spec.md §2.2, §5.4
 */
import type { SessionAdapter } from '../config/adapter.js'
import type { ResolvedConfig } from '../config/types.js'
import { InvalidConfigurationError } from '../errors.js'
import { emitEvent } from '../events.js'
import type { AdapterSession, AdapterUser, Session, SessionCallbackParams } from '../types.js'
import { clearChunkedCookie, readChunkedCookie, writeChunkedCookie, type OutgoingCookie } from './cookies.js'
import { isoDate } from './iso-date.js'
import { clientDetails } from './revocation.js'
import { methodName } from './confirmation-claims.js'
import { fieldValues, keepSessionFields } from './user-fields.js'
import type { Impersonation, SessionRequest, SessionResult } from './types.js'

// The migrations' sessionToken column holds 255 characters; a longer cookie (garbage, most old JWT
// session cookies) cannot be a session token and is not looked up.
const MAX_TOKEN_LENGTH = 255

/**
 * Reads the session of a request. An expired row is deleted (lazily, here, when its token comes
 * back) and its cookie cleared; an unknown token only clears the cookie.
 *
 * @param update With POST /session: the `data` passed to the `session` callback as `newSession`;
 *   the expiry is then always extended.
 * @throws AdapterError when the database fails; the cookie is kept, so an outage signs nobody out.
 */
export async function readDatabaseSession(request: SessionRequest, update?: { data: unknown }): Promise<SessionResult> {
  const { config, cookieSet, requestCookies } = request
  const adapter = sessionAdapter(config)
  const sessionToken = readChunkedCookie(requestCookies, cookieSet.cookies.sessionToken.name)
  if (!sessionToken) return { session: null, token: null, cookies: [] }
  const ended = (): SessionResult => ({ session: null, token: null, cookies: clearDatabaseSession(request) })
  if (sessionToken.length > MAX_TOKEN_LENGTH) return ended()

  const fields = config.sessionUserFields
  const found = await (config.sessionReadWith ? adapter.getSessionAndUser(sessionToken, config.sessionReadWith) : adapter.getSessionAndUser(sessionToken))
  if (!found) return ended()
  const nowMs = request.now * 1000
  if (found.session.expires.getTime() <= nowMs) {
    await adapter.deleteSession(sessionToken)
    return ended()
  }

  // The row was last extended at `expires - maxAge`; extend again once `updateAge` has passed since.
  // A session started on another's behalf (impersonation) ends at its own time: never extended.
  let { expires } = found.session
  let cookies: OutgoingCookie[] = []
  const { impersonatedBy } = found.session
  const lastExtended = expires.getTime() - config.session.maxAge * 1000
  if (!impersonatedBy && (update || nowMs - lastExtended >= config.session.updateAge * 1000)) {
    expires = new Date(nowMs + config.session.maxAge * 1000)
    await adapter.updateSession({ sessionToken, expires, lastSeenAt: new Date(nowMs) })
    cookies = sessionCookie(request, sessionToken, expires)
  }

  const { user } = found
  let session: Session = defaultSession(user, expires)
  if (impersonatedBy) session.impersonatedBy = impersonatedBy
  // The wings' fields (the roles) as the join read them; no callback changes them (user-fields.ts).
  if (fields) for (const field of fields) session.user[field.name] = field.fromUser(config, user[field.name])
  if (config.callbacks.session) {
    const kept = fields && fieldValues(fields, session)
    // `token` is a JWT session's; the type names both, as Auth.js does (see SessionCallbackParams).
    const params = { session, user, ...(update ? { trigger: 'update' as const, newSession: update.data } : {}) }
    session = await config.callbacks.session(params as SessionCallbackParams)
    if (kept) session = keepSessionFields(fields!, kept, session)
    // Nor does it hide an impersonation.
    if (impersonatedBy && session) session = { ...session, impersonatedBy }
  }
  if (config.events.session) await emitEvent(config, 'session', { session })
  return { session, token: null, cookies }
}

/**
 * Starts a session for `user` (who must exist in the adapter): a fresh token on every sign-in, so
 * a token planted in the browser before sign-in never becomes a signed-in session (fixation).
 * The browser's previous session, if any, is deleted; not when `impersonation` starts this one (the
 * administrator's own session is kept, to go back to).
 * @param impersonation The administrator who starts it as `user`, and when it ends (seconds since the epoch).
 * @returns The session cookie.
 */
export async function createDatabaseSession(request: SessionRequest, user: AdapterUser, method?: string, impersonation?: Impersonation): Promise<OutgoingCookie[]> {
  const { config, cookieSet, requestCookies } = request
  const adapter = sessionAdapter(config)
  const previous = readChunkedCookie(requestCookies, cookieSet.cookies.sessionToken.name)
  if (!impersonation && previous && previous.length <= MAX_TOKEN_LENGTH) await adapter.deleteSession(previous)

  const sessionToken = config.session.generateSessionToken()
  if (typeof sessionToken !== 'string' || sessionToken.length === 0 || sessionToken.length > MAX_TOKEN_LENGTH) {
    throw new InvalidConfigurationError(`session.generateSessionToken() must return a non-empty string of at most ${MAX_TOKEN_LENGTH} characters.`)
  }
  const expires = new Date((impersonation ? Math.min(impersonation.until, request.now + config.session.maxAge) : request.now + config.session.maxAge) * 1000)
  const { ipAddress, userAgent } = clientDetails(request.req)
  const createdAt = new Date(request.now * 1000)
  // The sign-in is the session's first confirmation (requireRecentSignIn, session/confirmation.ts).
  const confirmedWith = methodName(method)
  const row: AdapterSession = { sessionToken, userId: user.id, expires, createdAt, lastSeenAt: createdAt, ipAddress, userAgent, confirmedAt: createdAt, confirmedWith }
  // The wings' fields of the session itself (the active organization), as of the sign-in.
  if (config.sessionUserFields) {
    for (const field of config.sessionUserFields) if (field.perSession) Object.assign(row, field.perSession(await field.atSignIn(config, user.id)))
  }
  await adapter.createSession(impersonation ? { ...row, impersonatedBy: impersonation.by } : row)
  return sessionCookie(request, sessionToken, expires)
}

/** The request's unexpired session row, without extending it or running callbacks. */
export async function peekDatabaseSession(request: SessionRequest): Promise<AdapterSession | null> {
  const sessionToken = readChunkedCookie(request.requestCookies, request.cookieSet.cookies.sessionToken.name)
  if (!sessionToken || sessionToken.length > MAX_TOKEN_LENGTH) return null
  const { config } = request
  const found = await (config.sessionReadWith ? sessionAdapter(config).getSessionAndUser(sessionToken, config.sessionReadWith) : sessionAdapter(config).getSessionAndUser(sessionToken))
  return found && found.session.expires.getTime() > request.now * 1000 ? found.session : null
}

/**
 * Ends the request's session: deletes its row, then clears the cookie. When the database fails, the
 * sign-out fails (AdapterError) and the cookie is kept: clearing it would leave a live row behind,
 * and a copy of the token (another tab, a stolen cookie) would work again once the database is
 * back. The user sees the outage and can sign out again.
 *
 * @returns The deleted session (for the `signOut` event), `null` when there was none.
 * @throws AdapterError when the row could not be deleted.
 */
export async function endDatabaseSession(request: SessionRequest): Promise<{ session: AdapterSession | null; cookies: OutgoingCookie[] }> {
  const sessionToken = readChunkedCookie(request.requestCookies, request.cookieSet.cookies.sessionToken.name)
  let session: AdapterSession | null = null
  if (sessionToken && sessionToken.length <= MAX_TOKEN_LENGTH) session = (await sessionAdapter(request.config).deleteSession(sessionToken)) ?? null
  return { session, cookies: clearDatabaseSession(request) }
}

function clearDatabaseSession(request: SessionRequest): OutgoingCookie[] {
  return clearChunkedCookie(request.cookieSet.cookies.sessionToken, request.requestCookies)
}

// Written through the chunking helper so that the chunks of an earlier, longer JWT cookie are cleared.
function sessionCookie(request: SessionRequest, sessionToken: string, expires: Date): OutgoingCookie[] {
  return writeChunkedCookie(request.cookieSet.cookies.sessionToken, sessionToken, { expires }, request.requestCookies)
}

function defaultSession(user: AdapterUser, expires: Date): Session {
  return { user: { id: user.id, name: user.name, email: user.email, image: user.image }, expires: isoDate(expires.getTime()) }
}

// resolveConfig checked the session methods when it chose the database strategy.
function sessionAdapter(config: ResolvedConfig): SessionAdapter {
  return config.adapter as SessionAdapter
}

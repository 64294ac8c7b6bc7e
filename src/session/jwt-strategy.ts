/**
 * JWT sessions: the session lives in an encrypted cookie (JWE, see jwe.ts). Reading one runs on
 * every authenticated request, so the common case is one synchronous decrypt and no write: the
 * cookie is re-sealed only when `updateAge` has passed since it was issued, when the `jwt` callback
 * changed the token, or on an explicit update.
 *
 * @see spec/auth-library-spec.md §2.2, §5.4
 */
import { AdapterError, SessionTokenTooLargeError } from '../errors.js'
import { emitEvent } from '../events.js'
import type { Account, CookieOption, JWT, Session, SessionCallbackParams, User } from '../types.js'
import { clearChunkedCookie, expiredCookie, readChunkedCookieForms, writeChunkedCookie, type ChunkedCookieForms, type OutgoingCookie } from './cookies.js'
import { hasRefreshError, PROVIDER_TOKENS_CLAIM, signInProviderTokens } from './provider-tokens.js'
import type { SessionRequest, SessionResult, SignInDetails } from './types.js'
import { isoDate } from './iso-date.js'
import { openCachedSessionToken, ownClaims } from './token-cache.js'
import { sealSessionToken, type OpenedToken } from './token.js'
import { clientDetails, newSessionId, SESSION_ID_CLAIM, sessionIdOf, sessionStands } from './revocation.js'
import { confirmationClaims } from './confirmation-claims.js'
import { ACTOR_CLAIM, actorOf, keepActorClaim, sealedLifetime } from './actor.js'
import { fieldValues, keepFieldClaims, keepSessionFields, setFieldsFromClaims } from './user-fields.js'
import type { SessionStore } from './store/types.js'

/**
 * Reads the session of a request. The common read (no callbacks or `session` event, no re-issue due,
 * and, with a store, a session it is known to keep) answers without an await, so `auth()` costs one
 * turn of the event loop, not several.
 *
 * @param update With POST /session: the `data` passed to the `jwt` callback (`trigger: 'update'`);
 *   the cookie is then always re-sealed.
 */
export function readJwtSession(request: SessionRequest, update?: { data: unknown }): SessionResult | Promise<SessionResult> {
  const cookie = openSessionCookie(request)
  return cookie instanceof Promise ? cookie.then((opened) => sessionFromCookie(request, opened, update)) : sessionFromCookie(request, cookie, update)
}

function sessionFromCookie(request: SessionRequest, { present, opened, clearOther }: SessionCookie, update: { data: unknown } | undefined): SessionResult | Promise<SessionResult> {
  const { config, cookieSet, requestCookies, now } = request
  if (!present) return { session: null, token: null, cookies: [] }
  if (!opened) {
    // Unreadable, tampered, expired or from another secret: all mean "no session" (STYLE.md, Errors).
    config.logger.debug('JWTSessionError', 'The session cookie could not be read; it is cleared.')
    return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
  }
  const { callbacks, events, session } = config
  const { store } = session
  // The store's answer is usually known without an await (revocation.ts), and an await costs a turn.
  const stands = store ? sessionStands(config, store, opened.payload, now * 1000) : true
  const plainRead =
    update === undefined &&
    stands === true &&
    callbacks.jwt === undefined &&
    callbacks.session === undefined &&
    events.session === undefined &&
    now - issuedAt(opened) < session.updateAge &&
    // With a store, a token without a session id is given one (re-sealed) below.
    (store === undefined || sessionIdOf(opened.payload) !== undefined)
  if (plainRead) {
    const token = opened.payload as JWT
    return { session: defaultSession(config, token, sessionExpires(opened, request)), token, cookies: clearOther }
  }
  return readWithAppCode(request, opened, clearOther, update, stands)
}

/**
 * The rest of a read: the store's answer awaited, the app's callbacks and events, and the re-issue
 * when due.
 *
 * @param stands The store's answer (sessionStands), or `true` without a store.
 */
async function readWithAppCode(
  request: SessionRequest,
  opened: OpenedToken,
  clearOther: OutgoingCookie[],
  update: { data: unknown } | undefined,
  stands: boolean | Promise<boolean>,
): Promise<SessionResult> {
  const { config, cookieSet, requestCookies, now } = request
  const store = config.session.store
  if (!(stands === true || (stands !== false && (await stands)))) {
    config.logger.debug('SessionRevoked', 'The session was ended (signed out, revoked or signed out everywhere); its cookie is cleared.')
    return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
  }

  const issued = issuedAt(opened)
  // The re-issued cookie's, when the token is re-sealed below; else the token's own (sessionExpires).
  let expires: string | undefined
  // App code that sees the token gets a copy of its own; without any, the claims are only read.
  const appSeesToken = config.callbacks.jwt !== undefined || config.callbacks.session !== undefined || config.events.session !== undefined
  let token: JWT | null = appSeesToken ? ownClaims(opened) : (opened.payload as JWT)
  if (config.callbacks.jwt) {
    token = await config.callbacks.jwt(update ? { token, trigger: 'update', session: update.data } : { token })
    if (!token) return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
    // The wings' fields (the roles) stay as sealed: the callback, or the client data it copies, cannot change them.
    if (config.sessionUserFields) token = keepFieldClaims(config.sessionUserFields, opened.payload as JWT, token)
    // Nor the impersonation's actor (actor.ts).
    token = keepActorClaim(opened.payload as JWT, token)
  }

  // The plaintext is the token as it was sealed; a callback that changed anything shows up here.
  const changed = config.callbacks.jwt !== undefined && JSON.stringify(token) !== opened.plaintext
  // A re-seal clears whatever else the request carries, the losing form included.
  let cookies = clearOther
  const sid = store ? sessionIdOf(opened.payload) : undefined
  // With a store, a token without a session id gets one now (see revocation.ts).
  if (update || changed || now - issued >= config.session.updateAge || (store && sid === undefined)) {
    try {
      if (store) {
        token = { ...token, [SESSION_ID_CLAIM]: sid ?? newSessionId() }
        // A token without one is recorded only if the store itself (not this process's cached answer,
        // which may predate a sign-out everywhere elsewhere) still lets its issue time in.
        if (!(await recordSession(request, store, token, sid === undefined ? { issuedAt: issued * 1000 } : false))) {
          return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
        }
      }
      const resealed = await sealToken(request, token, update ? 'update' : undefined)
      expires = isoDate(resealed.expires * 1000)
      cookies = resealed.cookies
    } catch (error) {
      // POST /session is refused (the error reaches the route). A plain read must not end the
      // session over it: the old cookie stays valid until its own `exp`, and the log says why.
      // Nor fail over a store that could not move a standing session's expiry (the outage rule:
      // known sessions are let in; the guard has logged the store's failure): the next read re-issues.
      if (!update && sid !== undefined && error instanceof AdapterError) {
        config.logger.debug('SessionNotReissued', 'The session store could not record the re-issue; the session cookie is kept as it was.')
      } else {
        if (update || !(error instanceof SessionTokenTooLargeError)) throw error
        config.logger.error(error.type, `${error.message} The session cookie is kept as it was.`)
      }
    }
  }

  let session = defaultSession(config, token, expires ?? sessionExpires(opened, request))
  // `user` is a database session's; the type names both, as Auth.js does (see SessionCallbackParams).
  if (config.callbacks.session) {
    const kept = config.sessionUserFields && fieldValues(config.sessionUserFields, session)
    session = await config.callbacks.session({ session, token } as SessionCallbackParams)
    if (kept) session = keepSessionFields(config.sessionUserFields!, kept, session)
    const actor = actorOf(token)
    if (actor && session) session = { ...session, impersonatedBy: actor.sub }
  }
  if (config.events.session) await emitEvent(config, 'session', { session, token })
  return { session, token, cookies }
}

/**
 * Starts a session for `user` after a successful sign-in: the default claims, then the `jwt`
 * callback with `trigger: 'signIn'`. A `null` from the callback means no session is created.
 * @returns The cookies that carry the session (or clear the old one when none is created).
 */
export async function createJwtSession(request: SessionRequest, user: User, account: Account | null, details: SignInDetails = {}): Promise<OutgoingCookie[]> {
  const { config } = request
  const defaultToken: JWT = { name: user.name, email: user.email, picture: user.image, sub: user.id }
  // A new session id on every sign-in: one planted or kept from before never carries over.
  const store = config.session.store
  const sid = store ? newSessionId() : undefined
  if (sid) defaultToken[SESSION_ID_CLAIM] = sid
  // The provider's tokens, for getAccessToken(); the jwt callback sees them and may drop them. The
  // session this one replaces, when it was the same user's, passes on its other providers' tokens
  // whatever the new sign-in's method (a database session's account rows stay reachable likewise).
  const previous = await peekJwtToken(request)
  const providerTokens = signInProviderTokens(account, previous, user.id)
  if (providerTokens) defaultToken[PROVIDER_TOKENS_CLAIM] = providerTokens
  let token = config.callbacks.jwt
    ? await config.callbacks.jwt({ token: defaultToken, user, account, profile: details.profile, trigger: details.isNewUser ? 'signUp' : 'signIn', isNewUser: details.isNewUser ?? false })
    : defaultToken
  if (!token) return clearJwtSession(request)
  // The sign-in is the session's first confirmation (requireRecentSignIn), whatever the callback returned.
  token = { ...token, ...confirmationClaims(details.method, request.now) }
  // An impersonation's actor, and none otherwise, whatever the callback returned (actor.ts).
  const { impersonation } = details
  token = keepActorClaim(impersonation ? { [ACTOR_CLAIM]: { sub: impersonation.by, exp: impersonation.until } } : {}, token)
  // So are the wings' fields (the roles): read from where the user is stored, out of the callback's reach.
  if (config.sessionUserFields) {
    for (const field of config.sessionUserFields) token[field.name] = await field.atSignIn(config, String(token.sub ?? user.id))
  }
  if (store && sid) {
    token = { ...token, [SESSION_ID_CLAIM]: sid }
    await recordSession(request, store, token, 'signIn')
    // This browser's previous session ends with the new sign-in, as a database session's row does;
    // not an administrator's who starts an impersonation (they go back to it).
    const replacedId = !impersonation && previous && sessionIdOf(previous)
    if (replacedId && typeof previous.sub === 'string') await store.deleteSessions(previous.sub, { only: replacedId })
  }
  const trigger = details.isNewUser ? 'signUp' : 'signIn'
  let sealed: Awaited<ReturnType<typeof sealToken>>
  try {
    sealed = await sealToken(request, token, trigger)
  } catch (error) {
    // The provider tokens are not worth a failed sign-in: without them, only getAccessToken() fails.
    if (!(error instanceof SessionTokenTooLargeError) || token[PROVIDER_TOKENS_CLAIM] === undefined) throw error
    const { [PROVIDER_TOKENS_CLAIM]: _dropped, ...lighter } = token
    sealed = await sealToken(request, lighter, trigger)
    config.logger.warn(
      'ProviderTokensDropped',
      `With the provider tokens, the session token would be ${error.size} bytes, over jwt.maxSize (${error.maxSize}): they are left out, and getAccessToken() answers no_account for this session. Raise jwt.maxSize, or trim what the jwt callback adds.`,
    )
  }
  return sealed.cookies
}

/**
 * Writes the store's record of the session `token` names (its `sid`): a new one, or the re-issue's
 * new `lastSeenAt` and expiry.
 * @param created `'signIn'` for a new session; `{ issuedAt }` (ms) for a token without session id
 *   given one, refused when the user's "valid after" time is later; false for a re-issue.
 * @returns false when the session was ended meanwhile (a re-issue never brings it back), or the
 *   token without session id is refused.
 */
async function recordSession(request: SessionRequest, store: SessionStore, token: JWT, created: false | 'signIn' | { issuedAt: number }): Promise<boolean> {
  const { config, now } = request
  const id = sessionIdOf(token)!
  const userId = String(token.sub)
  const expires = (now + sealedLifetime(token, config.jwt.maxAge, now)) * 1000
  if (created === false) return store.touchSession(id, userId, now * 1000, expires)
  const session = { id, userId, createdAt: now * 1000, lastSeenAt: now * 1000, expires, ...clientDetails(request.req) }
  // A sign-in is never checked against "valid after": set by a sign-out everywhere up to a second
  // ahead, it would refuse a sign-in of that same second.
  return store.createSession(session, created === 'signIn' ? undefined : created.issuedAt)
}

/**
 * Gives a token without session id (sealed before the store, or by Auth.js) one now, as its next
 * read would: recorded (unless the user's "valid after" time refuses it) and re-sealed with it. For
 * a call about to refuse every older token without one that must keep this session
 * (`changePassword()`).
 * @returns The new session id and the cookies that carry the re-sealed token; null when refused.
 * @throws SessionTokenTooLargeError when the re-sealed token is over `jwt.maxSize`.
 */
export async function giveSessionId(request: SessionRequest, store: SessionStore, token: JWT): Promise<{ sessionId: string; cookies: OutgoingCookie[] } | null> {
  const sessionId = newSessionId()
  const withId: JWT = { ...token, [SESSION_ID_CLAIM]: sessionId }
  const issuedAt = typeof token.iat === 'number' ? token.iat * 1000 : 0
  if (!(await recordSession(request, store, withId, { issuedAt }))) return null
  return { sessionId, cookies: (await sealToken(request, withId)).cookies }
}

/** Cookies that end the session: the session cookie and every chunk of it. */
export function clearJwtSession(request: SessionRequest): OutgoingCookie[] {
  return clearChunkedCookie(request.cookieSet.cookies.sessionToken, request.requestCookies)
}

/** The token in the request's session cookie, without running callbacks (for sign-out). */
export async function peekJwtToken(request: SessionRequest): Promise<JWT | null> {
  const { opened } = await openSessionCookie(request)
  return opened ? ownClaims(opened) : null
}

/** The session cookie of a request, opened, and what to clear of it besides. */
interface SessionCookie {
  /** The request carries a session cookie, whole or chunked (even one that does not open). */
  present: boolean
  /** The session token, when one of the forms opened. */
  opened: OpenedToken | null
  /** Clears the form that lost, when the request carried both. */
  clearOther: OutgoingCookie[]
}

/**
 * Opens the request's session cookie. It comes whole (`name`) or chunked (`name.0`, `name.1`, …),
 * and the app clears the one form whenever it writes the other, so a request that carries both
 * carries a form the app did not write last: one planted by a page on a sibling subdomain (which
 * may set cookies for the parent domain, `__Secure-` ones included), or the crossed answers of two
 * concurrent requests. Taking the whole one blindly (as before) let a planted cookie override a
 * chunked session. Instead both are opened: the one that opens wins (a planted value cannot,
 * without the secret); if both open, the newer `iat` wins, i.e. the one this app wrote last (on a
 * tie, the whole one); the other form is cleared. The common case, one form, costs one decrypt.
 */
function openSessionCookie(request: SessionRequest): SessionCookie | Promise<SessionCookie> {
  const cookie = request.cookieSet.cookies.sessionToken
  const forms = readChunkedCookieForms(request.requestCookies, cookie.name)
  const { whole, chunked } = forms
  const { decode, cacheSize } = request.config.jwt
  if (!decode) {
    const { ring } = request.cookieSet
    const open = (sealed: string | undefined) => (sealed === undefined ? null : openCachedSessionToken(sealed, ring, request.now, cacheSize))
    return chooseForm(cookie, forms, open(whole), open(chunked))
  }
  const open = (sealed: string | undefined) => (sealed === undefined ? null : decodeToken(request, decode, sealed))
  return Promise.all([open(whole), open(chunked)]).then(([openedWhole, openedChunks]) => chooseForm(cookie, forms, openedWhole, openedChunks))
}

/** Which form of the session cookie counts (see openSessionCookie), each already opened. */
function chooseForm(cookie: CookieOption, { whole, chunked, chunkNames }: ChunkedCookieForms, openedWhole: OpenedToken | null, openedChunks: OpenedToken | null): SessionCookie {
  if (whole === undefined || chunkNames.length === 0) return { present: whole !== undefined || chunked !== undefined, opened: openedWhole ?? openedChunks, clearOther: [] }
  const chunksWin = openedChunks !== null && (openedWhole === null || issuedAt(openedChunks) > issuedAt(openedWhole))
  if (chunksWin) return { present: true, opened: openedChunks, clearOther: [expiredCookie(cookie)] }
  return { present: true, opened: openedWhole, clearOther: chunkNames.map((name) => expiredCookie(cookie, name)) }
}

function issuedAt(token: OpenedToken): number {
  return typeof token.payload.iat === 'number' ? token.payload.iat : 0
}

/**
 * When the session ends, as the session shows it (an ISO date): the token's `exp`, formatted on its
 * first read and kept with it, so a cached token's later reads answer the same string; or `maxAge`
 * from now for a token without one (a custom `encode`).
 */
function sessionExpires(opened: OpenedToken, { config, now }: SessionRequest): string {
  const { exp } = opened.payload
  return typeof exp === 'number' ? (opened.expires ??= isoDate(exp * 1000)) : isoDate((now + config.jwt.maxAge) * 1000)
}

/** The session of a token, `expires` formatted (an ISO date), with the wings' fields (sessionUserFields). */
function defaultSession(config: SessionRequest['config'], token: JWT, expires: string): Session {
  const session: Session = {
    user: { id: token.sub as string, name: token.name, email: token.email, image: token.picture },
    expires,
  }
  if (token[PROVIDER_TOKENS_CLAIM] !== undefined && hasRefreshError(token)) session.error = 'RefreshAccessTokenError'
  if (config.sessionUserFields) setFieldsFromClaims(config, config.sessionUserFields, session, token)
  if (token[ACTOR_CLAIM] !== undefined) {
    const actor = actorOf(token)
    if (actor) session.impersonatedBy = actor.sub
  }
  return session
}

/**
 * Seals `token` as the request's new session cookie, as the `updateAge` re-issue does, for a
 * change made outside a session read (getAccessToken's refreshed provider tokens).
 * @throws SessionTokenTooLargeError when the sealed token is over `jwt.maxSize`.
 */
export async function resealJwtToken(request: SessionRequest, token: JWT): Promise<OutgoingCookie[]> {
  return (await sealToken(request, token)).cookies
}

/** Opens a session cookie with the app's own `jwt.decode`. */
async function decodeToken(request: SessionRequest, decode: NonNullable<SessionRequest['config']['jwt']['decode']>, sealed: string): Promise<OpenedToken | null> {
  try {
    const payload = await decode({ token: sealed, secret: request.config.secrets, salt: request.cookieSet.cookies.sessionToken.name })
    return payload ? { payload, plaintext: JSON.stringify(payload) } : null
  } catch {
    return null
  }
}

/**
 * Seals `token` into the session cookie's value and the cookies that carry it.
 *
 * @param trigger The `jwt` callback's trigger that made `token`, for the error's message.
 * @throws SessionTokenTooLargeError when the sealed token is over `jwt.maxSize` (no cookie is sent).
 */
async function sealToken(request: SessionRequest, token: JWT, trigger?: 'signIn' | 'signUp' | 'update'): Promise<{ cookies: OutgoingCookie[]; expires: number }> {
  const { config, cookieSet, requestCookies, now } = request
  // An impersonation's token lives no longer than the impersonation.
  const maxAge = sealedLifetime(token, config.jwt.maxAge, now)
  const sessionCookie = cookieSet.cookies.sessionToken
  const value = config.jwt.encode
    ? await config.jwt.encode({ token, secret: config.secrets, salt: sessionCookie.name, maxAge })
    : sealSessionToken(token, cookieSet.ring.current, maxAge, now)
  // A compact JWE is ASCII, so its length is its size in bytes, and what the chunks split.
  if (value.length > config.jwt.maxSize) throw new SessionTokenTooLargeError(value.length, config.jwt.maxSize, trigger)
  const expires = now + maxAge
  return { cookies: writeChunkedCookie(sessionCookie, value, { expires: new Date(expires * 1000) }, requestCookies), expires }
}

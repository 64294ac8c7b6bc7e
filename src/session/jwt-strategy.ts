/**
 * JWT sessions: the session lives in an encrypted cookie (JWE, see jwe.ts). Reading one runs on
 * every authenticated request, so the common case is one synchronous decrypt and no write: the
 * cookie is re-sealed only when `updateAge` has passed since it was issued, when the `jwt` callback
 * changed the token, or on an explicit update.
 *
 * @see spec/auth-library-spec.md §2.2, §5.4
 */
import { emitEvent } from '../events.js'
import type { Account, JWT, Session, SessionCallbackParams, User } from '../types.js'
import { clearChunkedCookie, readChunkedCookie, writeChunkedCookie, type OutgoingCookie } from './cookies.js'
import type { SessionRequest, SessionResult, SignInDetails } from './strategy.js'
import { openSessionToken, sealSessionToken } from './token.js'

/**
 * Reads the session of a request.
 *
 * @param update With POST /session: the `data` passed to the `jwt` callback (`trigger: 'update'`);
 *   the cookie is then always re-sealed.
 */
export async function readJwtSession(request: SessionRequest, update?: { data: unknown }): Promise<SessionResult> {
  const { config, cookieSet, requestCookies, now } = request
  const sealed = readChunkedCookie(requestCookies, cookieSet.cookies.sessionToken.name)
  if (!sealed) return { session: null, token: null, cookies: [] }

  const opened = await openToken(request, sealed)
  if (!opened) {
    // Unreadable, tampered, expired or from another secret: all mean "no session" (STYLE.md, Errors).
    config.logger.debug('JWTSessionError', 'The session cookie could not be read; it is cleared.')
    return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
  }

  const issuedAt = typeof opened.payload.iat === 'number' ? opened.payload.iat : 0
  let expires = typeof opened.payload.exp === 'number' ? opened.payload.exp : now + config.jwt.maxAge
  let token: JWT | null = opened.payload
  if (config.callbacks.jwt) {
    token = await config.callbacks.jwt(update ? { token, trigger: 'update', session: update.data } : { token })
    if (!token) return { session: null, token: null, cookies: clearChunkedCookie(cookieSet.cookies.sessionToken, requestCookies) }
  }

  // The plaintext is the token as it was sealed; a callback that changed anything shows up here.
  const changed = config.callbacks.jwt !== undefined && JSON.stringify(token) !== opened.plaintext
  let cookies: OutgoingCookie[] = []
  if (update || changed || now - issuedAt >= config.session.updateAge) {
    const resealed = await sealToken(request, token)
    expires = resealed.expires
    cookies = resealed.cookies
  }

  let session = defaultSession(token, expires)
  // `user` is a database session's; the type names both, as Auth.js does (see SessionCallbackParams).
  if (config.callbacks.session) session = await config.callbacks.session({ session, token } as SessionCallbackParams)
  if (config.events.session) await emitEvent(config, 'session', { session, token })
  return { session, token, cookies }
}

/**
 * Starts a session for `user` after a successful sign-in: the default claims, then the `jwt`
 * callback with `trigger: 'signIn'`. A `null` from the callback means no session is created.
 */
export async function createJwtSession(request: SessionRequest, user: User, account: Account | null, details: SignInDetails = {}): Promise<SessionResult> {
  const { config } = request
  const defaultToken: JWT = { name: user.name, email: user.email, picture: user.image, sub: user.id }
  const token = config.callbacks.jwt
    ? await config.callbacks.jwt({ token: defaultToken, user, account, profile: details.profile, trigger: details.isNewUser ? 'signUp' : 'signIn', isNewUser: details.isNewUser ?? false })
    : defaultToken
  if (!token) return { session: null, token: null, cookies: clearJwtSession(request) }
  const { cookies, expires } = await sealToken(request, token)
  return { session: defaultSession(token, expires), token, cookies }
}

/** Cookies that end the session: the session cookie and every chunk of it. */
export function clearJwtSession(request: SessionRequest): OutgoingCookie[] {
  return clearChunkedCookie(request.cookieSet.cookies.sessionToken, request.requestCookies)
}

/** The token in the request's session cookie, without running callbacks (for sign-out). */
export async function peekJwtToken(request: SessionRequest): Promise<JWT | null> {
  const sealed = readChunkedCookie(request.requestCookies, request.cookieSet.cookies.sessionToken.name)
  return sealed ? ((await openToken(request, sealed))?.payload ?? null) : null
}

function defaultSession(token: JWT, expires: number): Session {
  return {
    user: { id: token.sub as string, name: token.name, email: token.email, image: token.picture },
    expires: new Date(expires * 1000).toISOString(),
  }
}

async function openToken(request: SessionRequest, sealed: string): Promise<{ payload: JWT; plaintext: string } | null> {
  const { config, cookieSet, now } = request
  if (!config.jwt.decode) return openSessionToken(sealed, cookieSet.ring, now)
  try {
    const payload = await config.jwt.decode({ token: sealed, secret: config.secrets, salt: cookieSet.cookies.sessionToken.name })
    return payload ? { payload, plaintext: JSON.stringify(payload) } : null
  } catch {
    return null
  }
}

async function sealToken(request: SessionRequest, token: JWT): Promise<{ cookies: OutgoingCookie[]; expires: number }> {
  const { config, cookieSet, requestCookies, now } = request
  const maxAge = config.jwt.maxAge
  const sessionCookie = cookieSet.cookies.sessionToken
  const value = config.jwt.encode
    ? await config.jwt.encode({ token, secret: config.secrets, salt: sessionCookie.name, maxAge })
    : sealSessionToken(token, cookieSet.ring.current, maxAge, now)
  const expires = now + maxAge
  return { cookies: writeChunkedCookie(sessionCookie, value, { expires: new Date(expires * 1000) }, requestCookies), expires }
}

/**
 * The cookie of an SSO sign-in under way (`ssoSignIn`): the connection it started with and, for
 * SAML, the id of the AuthnRequest sent, sealed with the secret so nobody can point a sign-in at
 * another connection or request, valid 10 minutes, cleared by the callback whatever its outcome.
 * It is what binds the identity provider's answer to the browser that asked for it (login CSRF).
 */
import type { OutgoingCookie } from '../../session/cookies.js'
import { expiredCookie } from '../../session/cookies.js'
import { keyRingFor } from '../../session/keys.js'
import { openSessionToken, sealSessionToken } from '../../session/token.js'
import type { SessionRequest } from '../../session/types.js'

/** Seconds a sign-in may take at the identity provider. */
export const SIGN_IN_LIFETIME = 10 * 60

const ring = keyRingFor('portcullis.sso-sign-in')

/** What the cookie holds. */
export interface SsoSignInState {
  /** The connection's id. */
  readonly connectionId: string
  readonly type: 'oidc' | 'saml'
  /** SAML: the AuthnRequest's id, which the response's InResponseTo must name. */
  readonly requestId?: string | undefined
}

export function signInStateCookie(request: SessionRequest, state: SsoSignInState): OutgoingCookie {
  const cookie = request.cookieSet.cookies.ssoSignIn
  const payload = { c: state.connectionId, t: state.type, ...(state.requestId !== undefined && { r: state.requestId }) }
  return { name: cookie.name, value: sealSessionToken(payload, ring(request.config.secrets).current, SIGN_IN_LIFETIME, request.now), options: cookie.options }
}

/** The state the request's cookie holds, or undefined (absent, expired, tampered). */
export function readSignInState(request: SessionRequest): SsoSignInState | undefined {
  const sealed = request.requestCookies[request.cookieSet.cookies.ssoSignIn.name]
  if (!sealed) return undefined
  const payload = openSessionToken(sealed, ring(request.config.secrets), request.now)?.payload as { c?: unknown; t?: unknown; r?: unknown } | undefined
  if (!payload || typeof payload.c !== 'string' || (payload.t !== 'oidc' && payload.t !== 'saml')) return undefined
  if (payload.r !== undefined && typeof payload.r !== 'string') return undefined
  return { connectionId: payload.c, type: payload.t, requestId: payload.r as string | undefined }
}

/** The cookie that clears it, when the request carries one. */
export function clearSignInState(request: SessionRequest): OutgoingCookie[] {
  const cookie = request.cookieSet.cookies.ssoSignIn
  return request.requestCookies[cookie.name] !== undefined ? [expiredCookie(cookie)] : []
}

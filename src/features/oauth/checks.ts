/**
 * The checks of an OAuth flow (spec §2.1 `checks`): PKCE, state and nonce. Each value travels in
 * an encrypted cookie with the Auth.js name (`authjs.pkce.code_verifier`, `authjs.state`,
 * `authjs.nonce`), sealed with the secret, bound to the provider, valid 15 minutes, and cleared by
 * the callback whatever its outcome: a check is used once.
 *
 * The `state` parameter is itself the sealed value (the cookie holds the same string): a redirect
 * proxy, which never sees the origin's cookies, can still open it to learn where to forward the
 * callback, and nobody without the secret can forge or alter that destination.
 *
 * When a check fails, the error code and the log line name the cookie and the usual causes
 * (InvalidCheckError), because "state mismatch" alone sends people searching for hours.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636 PKCE
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-10.12 state against CSRF
 * @see https://openid.net/specs/openid-connect-core-1_0.html#NonceNotes
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { SessionRequest } from '../../session/types.js'
import { InvalidCheckError, type OAuthCheck } from './errors.js'
import { expiredCookie, type OutgoingCookie } from '../../session/cookies.js'
import { keyRingFor } from '../../session/keys.js'
import { openSessionToken, sealSessionToken } from '../../session/token.js'
import type { CookieOption, CookiesOptions } from '../../types.js'
import type { OAuthProvider } from './provider.js'

type CheckRequest = SessionRequest

const LIFETIME = 15 * 60

/** The cookie of each check. */
const COOKIE: Readonly<Record<OAuthCheck, keyof CookiesOptions>> = { pkce: 'pkceCodeVerifier', state: 'state', nonce: 'nonce' }

/** What a sealed check holds. */
interface CheckPayload {
  /** Which check: a nonce cookie cannot pass for a state. */
  chk: OAuthCheck
  /** The provider whose flow created it. */
  pid: string
  /** The verifier or nonce (a random value for state). */
  v: string
  /** State only: the callback URL of the deployment that started the flow (redirect proxy). */
  o?: string
}

// The salt is fixed, not a cookie name: a redirect proxy on https must open a state sealed by a
// deployment on http (other cookie names) with the same secret.
const ring = keyRingFor('portcullis.oauth-checks')

/** What the authorization request carries, and the cookies that remember it. */
export interface StartedChecks {
  params: { state?: string; nonce?: string; code_challenge?: string; code_challenge_method?: 'S256' }
  cookies: OutgoingCookie[]
}

/**
 * Creates the provider's checks for a new authorization request.
 *
 * @param originCallbackUrl This deployment's callback URL, carried in the state for a redirect proxy.
 */
export function startChecks(request: CheckRequest, provider: OAuthProvider, originCallbackUrl: string): StartedChecks {
  const started: StartedChecks = { params: {}, cookies: [] }
  for (const check of provider.checks) {
    const value = randomBytes(32).toString('base64url')
    const payload: CheckPayload = { chk: check, pid: provider.id, v: value }
    if (check === 'state' && provider.redirectProxyUrl) payload.o = originCallbackUrl
    const sealed = sealSessionToken(payload as unknown as Record<string, unknown>, ring(request.config.secrets).current, LIFETIME, request.now)
    const cookie = request.cookieSet.cookies[COOKIE[check]]
    started.cookies.push({ name: cookie.name, value: sealed, options: cookie.options })
    if (check === 'pkce') {
      started.params.code_challenge = createHash('sha256').update(value).digest('base64url')
      started.params.code_challenge_method = 'S256'
    } else if (check === 'state') started.params.state = sealed
    else started.params.nonce = value
  }
  return started
}

const VERIFY_ORDER: readonly OAuthCheck[] = ['state', 'pkce', 'nonce']

/** The values the token exchange needs, after every configured check passed. */
export interface VerifiedChecks {
  codeVerifier: string | undefined
  state: string | undefined
  nonce: string | undefined
}

/**
 * Verifies the callback's checks against their cookies.
 *
 * @throws InvalidCheckError naming the check, the cookie, and the likely cause.
 */
export function verifyChecks(request: CheckRequest, provider: OAuthProvider, params: URLSearchParams): VerifiedChecks {
  const verified: VerifiedChecks = { codeVerifier: undefined, state: undefined, nonce: undefined }
  // State first: when a whole flow is stale or foreign, its failure says so most plainly.
  for (const check of VERIFY_ORDER.filter((check) => provider.checks.includes(check))) {
    const cookie = request.cookieSet.cookies[COOKIE[check]]
    const sealed = request.requestCookies[cookie.name]
    if (!sealed) throw missingCookie(request, check, cookie)
    if (check === 'state') {
      const state = params.get('state')
      if (!state) throw new InvalidCheckError('state', 'state_missing', `The callback of "${provider.id}" has no state parameter, but a state check was started: the provider dropped it, or the callback URL was not the provider's redirect.`)
      if (!sameString(state, sealed)) {
        throw new InvalidCheckError(
          'state',
          'state_mismatch',
          `The state of the "${provider.id}" callback differs from the "${cookie.name}" cookie. Usual causes: a second sign-in started in another tab (the newer flow replaced the cookie), a callback URL that was replayed or came from someone else's flow (login CSRF).`,
        )
      }
    }
    const payload = openCheck(request, sealed)
    if (!payload || payload.chk !== check) {
      throw new InvalidCheckError(check, `${check}_cookie_invalid`, `The "${cookie.name}" cookie could not be opened: it expired (checks live 15 minutes), or was sealed with another secret.`)
    }
    if (payload.pid !== provider.id) {
      throw new InvalidCheckError(
        check,
        `${check}_provider_mismatch`,
        `The "${cookie.name}" cookie belongs to a sign-in with "${payload.pid}", but the callback is for "${provider.id}": a sign-in with another provider started in a second tab, or a callback from another flow.`,
      )
    }
    if (check === 'pkce') verified.codeVerifier = payload.v
    else if (check === 'state') verified.state = sealed
    else verified.nonce = payload.v
  }
  return verified
}

/** The cookies that clear every check the request still carries: each check is used once. */
export function clearChecks(request: CheckRequest): OutgoingCookie[] {
  const cleared: OutgoingCookie[] = []
  for (const key of Object.values(COOKIE)) {
    const cookie = request.cookieSet.cookies[key]
    if (request.requestCookies[cookie.name] !== undefined) cleared.push(expiredCookie(cookie))
  }
  return cleared
}

/** True when the request carries any check cookie (false for a cross-site form_post under SameSite=Lax). */
export function hasCheckCookies(request: CheckRequest): boolean {
  return Object.values(COOKIE).some((key) => request.requestCookies[request.cookieSet.cookies[key].name] !== undefined)
}

/**
 * Where a redirect proxy forwards a callback: the origin callback URL sealed in `state`, when the
 * state opens with the secret and belongs to this provider. `undefined` when it does not (the
 * callback is then handled here, and fails its checks if it was not this deployment's).
 */
export function proxyDestination(request: CheckRequest, provider: OAuthProvider, state: string | null): string | undefined {
  if (!state) return undefined
  const payload = openCheck(request, state)
  if (!payload || payload.chk !== 'state' || payload.pid !== provider.id || !payload.o) return undefined
  return payload.o
}

function openCheck(request: CheckRequest, sealed: string): CheckPayload | undefined {
  const opened = openSessionToken(sealed, ring(request.config.secrets), request.now)
  const payload = opened?.payload as Partial<CheckPayload> | undefined
  if (!payload || typeof payload.chk !== 'string' || typeof payload.pid !== 'string' || typeof payload.v !== 'string') return undefined
  if (payload.o !== undefined && typeof payload.o !== 'string') return undefined
  return payload as CheckPayload
}

function sameString(a: string, b: string): boolean {
  const hash = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(hash(a), hash(b))
}

/** A check cookie did not arrive: say which, and why that usually happens. */
function missingCookie(request: CheckRequest, check: OAuthCheck, cookie: CookieOption): InvalidCheckError {
  const other = request.config.cookieSets[request.cookieSet.secure ? 'insecure' : 'secure'].cookies[COOKIE[check]].name
  if (other !== cookie.name && request.requestCookies[other] !== undefined) {
    return new InvalidCheckError(
      check,
      `${check}_cookie_name_mismatch`,
      `The callback expected the "${cookie.name}" cookie but the browser sent "${other}": the sign-in started over ${request.cookieSet.secure ? 'http' : 'https'} and the callback arrived over ${request.cookieSet.secure ? 'https' : 'http'}. Behind a TLS-terminating proxy, set Express's "trust proxy" (or AUTH_URL) so both requests see the same protocol.`,
    )
  }
  return new InvalidCheckError(
    check,
    `${check}_cookie_missing`,
    `The "${cookie.name}" cookie (the ${check} check) was not sent with the callback. Usual causes: it was already used or expired (the back button, a replayed callback URL, more than 15 minutes at the provider); ` +
      'the callback arrived on another host than the sign-in started on (www vs bare domain, localhost vs 127.0.0.1, AUTH_URL or redirectProxyUrl pointing elsewhere); ' +
      'SameSite blocked it (a custom cookie config with SameSite=Strict, or a cross-site POST callback); ' +
      'a TLS-terminating proxy without Express\'s "trust proxy", so the __Secure- cookie name differs between sign-in and callback.',
  )
}

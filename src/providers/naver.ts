/**
 * Sign in with Naver (네이버 로그인). Naver is OAuth 2 only, with no ID token: the profile comes from
 * `GET https://openapi.naver.com/v1/nid/me`, whose answer wraps the user in `response` beside a
 * `resultcode` and `message`; this provider unwraps it.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Naver from 'portcullis/providers/naver'
 *
 * // AUTH_NAVER_ID and AUTH_NAVER_SECRET fill clientId and clientSecret. At
 * // https://developers.naver.com/apps/ register an application using 네이버 로그인, choose the
 * // profile items (name/nickname, e-mail, profile image) and set the Callback URL to
 * // https://<your-site>/api/auth/callback/naver.
 * const { handlers, auth } = Portcullis({ providers: [Naver] })
 * ```
 * @see https://developers.naver.com/docs/login/api/api.md
 * @see https://developers.naver.com/docs/login/profile/profile.md
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The `response` of `GET /v1/nid/me`; which fields are present depends on the profile items the
 * app requests and the user agrees to.
 * @see https://developers.naver.com/docs/login/profile/profile.md
 */
export interface NaverProfile {
  /** The user's id for this app: stable, the key of the account. */
  id: string
  nickname?: string
  name?: string
  email?: string
  gender?: 'F' | 'M' | 'U'
  /** e.g. `20-29`. */
  age?: string
  /** `MM-DD`. */
  birthday?: string
  birthyear?: string
  profile_image?: string
  mobile?: string
  mobile_e164?: string
  [key: string]: unknown
}

/** The whole answer of `GET /v1/nid/me`: `resultcode` `00` on success. */
export interface NaverProfileResponse {
  resultcode: string
  message: string
  response?: NaverProfile
}

/** Overrides of the Naver provider; every field optional. */
export type NaverUserConfig = OAuthUserConfig<NaverProfile>

/** One line for the providers table. */
export const quirks = 'No scopes (profile items are chosen in the app settings); profile wrapped in response; the address is never taken (no verified flag)'

const PROFILE_URL = 'https://openapi.naver.com/v1/nid/me'

/**
 * The Naver provider.
 *
 * Defaults: no scope parameter (Naver has none); client authentication `client_secret_post`
 * (Naver documents the client id and secret as parameters); checks PKCE and `state` (Naver
 * requires `state` and does not document PKCE). `name` is the name, else the nickname. Naver gives
 * the address with no verification status, so `emailVerified` is false and it is never taken.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Ask again for the profile items the user declined:
 * Naver({ authorization: { params: { auth_type: 'reprompt' } } })
 * ```
 * @see https://developers.naver.com/docs/login/devguide/devguide.md
 */
export default function Naver(options: NaverUserConfig = {}): OAuthConfig<NaverProfile> {
  assertOptions('Naver', options)
  const defaults: OAuthConfig<NaverProfile> = {
    id: 'naver',
    name: 'Naver',
    type: 'oauth',
    authorization: { url: 'https://nid.naver.com/oauth2.0/authorize', params: {} },
    token: 'https://nid.naver.com/oauth2.0/token',
    userinfo: { url: PROFILE_URL, request: (context) => fetchNaverProfile(context) },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: profile.id,
      name: profile.name || profile.nickname || null,
      email: profile.email || null,
      // Naver's profile API gives the address without saying whether it is verified.
      emailVerified: false,
      image: profile.profile_image || null,
    }),
  }
  return withOverrides(defaults, options)
}

async function fetchNaverProfile({ tokens, provider }: UserinfoContext): Promise<NaverProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Naver: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? PROFILE_URL
  const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
  const body = (await response.json().catch(() => null)) as NaverProfileResponse | null
  if (!response.ok || !body || typeof body !== 'object' || body.resultcode !== '00') {
    // Naver's errors are `{ resultcode, message }`, e.g. 024 "Authentication failed".
    const detail = body && typeof body.resultcode === 'string' ? `: resultcode ${body.resultcode.slice(0, 16)} ${String(body.message ?? '').slice(0, 200)}` : ''
    throw new Error(`Naver: GET ${url} answered ${response.status}${detail}`)
  }
  const profile = body.response
  if (!profile || typeof profile !== 'object' || typeof profile.id !== 'string' || !profile.id) throw new Error(`Naver: GET ${url} answered without a user id.`)
  return profile
}

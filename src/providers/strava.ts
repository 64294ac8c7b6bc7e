/**
 * Sign in with Strava. Strava is OAuth 2 only, with no ID token, and never gives the address. The
 * token response carries the athlete's summary (`athlete`), which this provider reads without a
 * further request; only when it is missing does it ask `GET /api/v3/athlete`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Strava from 'portcullis/providers/strava'
 *
 * // AUTH_STRAVA_ID and AUTH_STRAVA_SECRET fill clientId and clientSecret. At
 * // https://www.strava.com/settings/api set the "Authorization Callback Domain" to your site's host
 * // name (Strava checks the domain of the redirect URI, not the full URL).
 * const { handlers, auth } = Portcullis({ providers: [Strava] })
 * ```
 * @see https://developers.strava.com/docs/authentication/
 * @see https://developers.strava.com/docs/reference/#api-Athletes-getLoggedInAthlete
 */
import type { OAuthConfig, OAuthUserConfig, TokenSet, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * A Strava athlete: the summary of the token response (`resource_state` 2) or the detailed athlete
 * of `GET /api/v3/athlete` (`resource_state` 3), which adds fields such as `follower_count`.
 * @see https://developers.strava.com/docs/reference/#api-models-SummaryAthlete
 * @see https://developers.strava.com/docs/reference/#api-models-DetailedAthlete
 */
export interface StravaProfile {
  /** The athlete's id: stable, the key of the account. */
  id: number
  username?: string | null
  resource_state?: number
  firstname?: string | null
  lastname?: string | null
  bio?: string | null
  city?: string | null
  state?: string | null
  country?: string | null
  sex?: 'M' | 'F' | null
  premium?: boolean
  summit?: boolean
  created_at?: string
  updated_at?: string
  badge_type_id?: number
  weight?: number | null
  /** 62×62 picture. Relative (`avatar/athlete/medium.png`) when the athlete has none. */
  profile_medium?: string
  /** 124×124 picture. Relative (`avatar/athlete/large.png`) when the athlete has none. */
  profile?: string
  [key: string]: unknown
}

/** Overrides of the Strava provider; every field optional. */
export type StravaUserConfig = OAuthUserConfig<StravaProfile>

/** One line for the providers table. */
export const quirks = 'No e-mail: Strava does not give it. Scopes are comma-separated; the athlete comes in the token response'

/**
 * The Strava provider.
 *
 * Defaults: scope `read` (public profile); `approval_prompt=auto`; client authentication
 * `client_secret_post` (Strava documents the client id and secret as form parameters); checks PKCE
 * and `state` (Strava does not document PKCE). `email` is always `null`; `image` is `null` for
 * Strava's placeholder picture.
 *
 * Strava separates scopes with commas, not spaces: `scope: 'read,activity:read_all'`.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * Strava({ authorization: { params: { scope: 'read,activity:read_all', approval_prompt: 'force' } } })
 * ```
 * @see https://developers.strava.com/docs/authentication/#detailsaboutrequestingaccess
 */
export default function Strava(options: StravaUserConfig = {}): OAuthConfig<StravaProfile> {
  assertOptions('Strava', options)
  const defaults: OAuthConfig<StravaProfile> = {
    id: 'strava',
    name: 'Strava',
    type: 'oauth',
    authorization: { url: 'https://www.strava.com/oauth/authorize', params: { scope: 'read', approval_prompt: 'auto' } },
    token: 'https://www.strava.com/oauth/token',
    userinfo: { url: 'https://www.strava.com/api/v3/athlete', request: (context) => stravaAthlete(context) },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: String(profile.id),
      name: [profile.firstname, profile.lastname].filter(Boolean).join(' ') || profile.username || null,
      email: null,
      emailVerified: false,
      image: pictureUrl(profile.profile) ?? pictureUrl(profile.profile_medium),
    }),
  }
  return withOverrides(defaults, options)
}

/** An absolute picture URL; Strava's placeholder is a relative path, which is no picture. */
function pictureUrl(value: unknown): string | null {
  return typeof value === 'string' && /^https?:\/\//i.test(value) ? value : null
}

/** The athlete of the token response, else `GET /api/v3/athlete`. */
async function stravaAthlete({ tokens, provider }: UserinfoContext): Promise<StravaProfile> {
  const athlete = (tokens as TokenSet & { athlete?: unknown }).athlete
  if (isAthlete(athlete)) return athlete
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Strava: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? 'https://www.strava.com/api/v3/athlete'
  const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
  if (!response.ok) {
    // Strava's errors are `{ message, errors: [...] }`; the token is never in them.
    const body = (await response.json().catch(() => null)) as { message?: unknown } | null
    const detail = typeof body?.message === 'string' ? `: ${body.message.slice(0, 200)}` : ''
    throw new Error(`Strava: GET ${url} answered ${response.status}${detail}`)
  }
  const detailed: unknown = await response.json()
  if (!isAthlete(detailed)) throw new Error(`Strava: GET ${url} answered without an athlete id.`)
  return detailed
}

function isAthlete(value: unknown): value is StravaProfile {
  return !!value && typeof value === 'object' && typeof (value as StravaProfile).id === 'number'
}

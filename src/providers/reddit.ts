/**
 * Sign in with Reddit. Reddit is OAuth 2 only, with no ID token: the profile comes from
 * `GET https://oauth.reddit.com/api/v1/me` (the `identity` scope). Reddit never gives the address.
 *
 * Reddit's API rules require a unique, descriptive `User-Agent` on every API request (generic ones
 * are rate-limited or blocked), in the form `<platform>:<app ID>:<version> (by /u/<username>)`:
 * pass yours as `userAgent`. The default names the client id and Portcullis.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Reddit from 'portcullis/providers/reddit'
 *
 * // AUTH_REDDIT_ID and AUTH_REDDIT_SECRET fill clientId and clientSecret. At
 * // https://www.reddit.com/prefs/apps create a "web app" whose redirect uri is
 * // https://<your-site>/api/auth/callback/reddit.
 * const { handlers, auth } = Portcullis({ providers: [Reddit({ userAgent: 'web:com.example.app:1.0 (by /u/example)' })] })
 * ```
 * @see https://github.com/reddit-archive/reddit/wiki/OAuth2
 * @see https://github.com/reddit-archive/reddit/wiki/API (User-Agent rules)
 * @see https://www.reddit.com/dev/api/#GET_api_v1_me
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The identity of the authenticated user as `GET /api/v1/me` returns it (`identity` scope): the
 * fields a sign-in uses, others kept as `unknown`.
 * @see https://www.reddit.com/dev/api/#GET_api_v1_me
 */
export interface RedditProfile {
  /** The account id in base 36 (the `t2_` fullname without its prefix). Stable; `name` is too. */
  id: string
  /** The username (`u/<name>`). */
  name: string
  /** The avatar. Reddit HTML-escapes URLs in JSON (`&amp;`) unless asked for `raw_json=1`. */
  icon_img: string
  snoovatar_img?: string
  has_verified_email: boolean
  verified?: boolean
  created_utc: number
  over_18?: boolean
  is_suspended?: boolean
  total_karma?: number
  subreddit?: { display_name_prefixed?: string; icon_img?: string; [key: string]: unknown } | null
  [key: string]: unknown
}

/** Overrides of the Reddit provider; every field optional. */
export interface RedditUserConfig extends OAuthUserConfig<RedditProfile> {
  /**
   * The `User-Agent` of the profile request, as Reddit's API rules ask:
   * `<platform>:<app ID>:<version string> (by /u/<reddit username>)`.
   * Default: `web:<clientId>:portcullis (Portcullis sign-in)`.
   * @see https://github.com/reddit-archive/reddit/wiki/API
   */
  userAgent?: string
}

/** One line for the providers table. */
export const quirks = 'No e-mail: Reddit does not give it. Needs a descriptive User-Agent (userAgent option)'

/**
 * The Reddit provider.
 *
 * Defaults: scope `identity`; `duration=temporary` (a one-hour token and no refresh token; ask for
 * `duration: 'permanent'` in `authorization.params` for one); client authentication
 * `client_secret_basic`, as Reddit requires; checks PKCE and `state` (Reddit requires `state` and
 * does not document PKCE). The profile's `email` is always `null`.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key; and `userAgent`.
 * @example
 * ```ts
 * Reddit({ userAgent: 'web:com.example.app:1.0 (by /u/example)', authorization: { params: { duration: 'permanent' } } })
 * ```
 * @see https://github.com/reddit-archive/reddit/wiki/OAuth2#authorization
 */
export default function Reddit(options: RedditUserConfig = {}): OAuthConfig<RedditProfile> {
  assertOptions('Reddit', options)
  const { userAgent, ...overrides } = options
  if (userAgent !== undefined && (typeof userAgent !== 'string' || !userAgent.trim())) {
    throw new TypeError('Reddit(options): userAgent must be a non-empty string, e.g. "web:com.example.app:1.0 (by /u/example)".')
  }
  const defaults: OAuthConfig<RedditProfile> = {
    id: 'reddit',
    name: 'Reddit',
    type: 'oauth',
    authorization: { url: 'https://www.reddit.com/api/v1/authorize', params: { scope: 'identity', duration: 'temporary' } },
    token: 'https://www.reddit.com/api/v1/access_token',
    userinfo: {
      url: 'https://oauth.reddit.com/api/v1/me',
      request: (context) => fetchRedditProfile(context, userAgent ?? `web:${context.provider.clientId}:portcullis (Portcullis sign-in)`),
    },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: profile.id,
      name: profile.name ?? null,
      email: null,
      emailVerified: false,
      image: avatarUrl(profile.icon_img),
    }),
  }
  return withOverrides(defaults, overrides)
}

/** The avatar URL, unescaped (Reddit's legacy JSON escapes `&` as `&amp;`), or `null`. */
function avatarUrl(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return null
  return value.replace(/&amp;/g, '&')
}

async function fetchRedditProfile({ tokens, provider }: UserinfoContext, userAgent: string): Promise<RedditProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Reddit: the token endpoint answered without an access_token.')
  const url = new URL(provider.userinfoUrl ?? 'https://oauth.reddit.com/api/v1/me')
  // Unescaped JSON: URLs arrive as URLs.
  url.searchParams.set('raw_json', '1')
  const response = await fetch(url, {
    headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json', 'User-Agent': userAgent },
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) {
    // Reddit's errors are `{ message, error }`; 429 means the User-Agent or rate was refused.
    const body = (await response.json().catch(() => null)) as { message?: unknown } | null
    const detail = typeof body?.message === 'string' ? `: ${body.message.slice(0, 200)}` : ''
    const hint = response.status === 429 ? ' (rate-limited: give Reddit a descriptive userAgent)' : ''
    throw new Error(`Reddit: GET ${url.origin}${url.pathname} answered ${response.status}${detail}${hint}`)
  }
  const profile = (await response.json()) as RedditProfile
  if (!profile || typeof profile !== 'object' || typeof profile.id !== 'string' || !profile.id) {
    throw new Error(`Reddit: GET ${url.origin}${url.pathname} answered without an account id.`)
  }
  return profile
}

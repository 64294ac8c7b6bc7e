/**
 * Sign in with X (formerly Twitter), OAuth 2.0 Authorization Code Flow with PKCE. No ID token: the
 * profile is the X API v2's `GET /2/users/me`, with `user.fields` for the picture (and the
 * confirmed address when the `users.email` scope was granted).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Twitter from 'portcullis/providers/twitter'
 *
 * // AUTH_TWITTER_ID and AUTH_TWITTER_SECRET fill clientId and clientSecret: the app's OAuth 2.0
 * // Client ID and Client Secret (not the OAuth 1.0a API key). In the Developer Portal (User
 * // authentication settings): type "Web App" (a confidential client), callback URI
 * // https://<your-site>/api/auth/callback/twitter.
 * const { handlers, auth } = Portcullis({ providers: [Twitter] })
 * ```
 * @see https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code
 * @see https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token
 * @see https://docs.x.com/x-api/users/user-lookup-me
 */
import type { OAuthConfig, OAuthUserConfig, TokenSet, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The answer of `GET /2/users/me`: the user under `data` (default fields `id`, `name`, `username`,
 * the others only when named in `user.fields`).
 * @see https://docs.x.com/x-api/fundamentals/data-dictionary#user
 */
export interface TwitterProfile {
  data: {
    /** The user's id (a 64-bit integer as a string): stable, unlike `username`. */
    id: string
    /** The display name. */
    name: string
    /** The handle, without `@`; the user can change it. */
    username: string
    /** With `user.fields=profile_image_url`: the 48×48 picture (`..._normal.jpg`). */
    profile_image_url?: string
    /**
     * With the `users.email` scope, `user.fields=confirmed_email`, and "Request email from users"
     * turned on for the app: the address X has confirmed.
     */
    confirmed_email?: string
    created_at?: string
    description?: string
    location?: string
    protected?: boolean
    url?: string
    verified?: boolean
    verified_type?: 'blue' | 'business' | 'government' | 'none'
    [key: string]: unknown
  }
  errors?: Array<{ title?: string; detail?: string; type?: string; [key: string]: unknown }>
  [key: string]: unknown
}

/** Overrides of the Twitter/X provider; every field optional. */
export type TwitterUserConfig = OAuthUserConfig<TwitterProfile>

/** One line for the providers table in the docs. */
export const quirks = 'No e-mail unless the users.email scope is added (and Request email from users is on in the app)'

const USERS_ME = 'https://api.x.com/2/users/me'

/**
 * The Twitter/X provider.
 *
 * Defaults: scope `users.read tweet.read` (X needs `tweet.read` for `/2/users/me`); PKCE (S256) and
 * `state`, both of which X requires; client authentication `client_secret_basic`, as X requires of
 * confidential clients. `email` is `null` unless you add the `users.email` scope (and turn on
 * "Request email from users" in the app's settings): then, when the user granted it, the profile
 * is asked for `confirmed_email` too, an address X has confirmed. Add `offline.access` for a
 * refresh token.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * Twitter({ authorization: { params: { scope: 'users.read tweet.read users.email offline.access' } } })
 * ```
 * @see https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code#scopes
 */
export default function Twitter(options: TwitterUserConfig = {}): OAuthConfig<TwitterProfile> {
  assertOptions('Twitter', options)
  const defaults: OAuthConfig<TwitterProfile> = {
    id: 'twitter',
    name: 'X',
    type: 'oauth',
    authorization: { url: 'https://x.com/i/oauth2/authorize', params: { scope: 'users.read tweet.read' } },
    token: 'https://api.x.com/2/oauth2/token',
    userinfo: { url: USERS_ME, request: fetchTwitterProfile },
    checks: ['pkce', 'state'],
    profile: ({ data }) => ({
      id: data.id,
      name: data.name || data.username || null,
      email: data.confirmed_email || null,
      // X documents confirmed_email as an address it has confirmed; there is no other address field.
      emailVerified: !!data.confirmed_email,
      image: data.profile_image_url || null,
    }),
  }
  return withOverrides(defaults, options)
}

/** `GET /2/users/me` with the picture, and the confirmed address when the token may read it. */
async function fetchTwitterProfile({ tokens, provider }: UserinfoContext): Promise<TwitterProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('X: the token endpoint answered without an access_token.')
  const url = new URL(provider.userinfoUrl ?? USERS_ME)
  url.searchParams.set('user.fields', mayReadEmail(tokens) ? 'profile_image_url,confirmed_email' : 'profile_image_url')
  const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
  const body = (await response.json().catch(() => null)) as (TwitterProfile & { title?: unknown; detail?: unknown }) | null
  if (!response.ok) {
    // X's errors are problem details: `{ title, detail, type, status }`; never the token.
    const detail = typeof body?.detail === 'string' ? `: ${body.detail.slice(0, 200)}` : typeof body?.title === 'string' ? `: ${body.title.slice(0, 200)}` : ''
    throw new Error(`X: GET ${url.origin}${url.pathname} answered ${response.status}${detail}`)
  }
  if (!body || typeof body.data !== 'object' || body.data === null || typeof body.data.id !== 'string' || !body.data.id) {
    throw new Error(`X: GET ${url.origin}${url.pathname} answered without data.id.`)
  }
  return body
}

/** Whether the granted scopes (space-separated in the token response) include `users.email`. */
function mayReadEmail(tokens: TokenSet): boolean {
  return typeof tokens.scope === 'string' && tokens.scope.split(/\s+/).includes('users.email')
}

/**
 * Sign in with Zoom (a user-managed OAuth app on the Zoom App Marketplace). No ID token: the
 * profile is the Zoom API's `GET /v2/users/me`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Zoom from 'portcullis/providers/zoom'
 *
 * // AUTH_ZOOM_ID and AUTH_ZOOM_SECRET fill clientId and clientSecret.
 * // In the Marketplace (your app → Basic information → OAuth), set the redirect URL and add to the
 * // allow list https://<your-site>/api/auth/callback/zoom; under Scopes, add user:read:user
 * // (older apps: user:read or user_info:read).
 * const { handlers, auth } = Portcullis({ providers: [Zoom] })
 * ```
 * @see https://developers.zoom.us/docs/integrations/oauth/
 * @see https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}
 */
import type { OAuthConfig, OAuthUserConfig } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The user as `GET /v2/users/me` returns it (the fields this provider reads, and common others).
 * @see https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}
 */
export interface ZoomProfile {
  /** The Zoom user id: stable. */
  id: string
  first_name?: string
  last_name?: string
  display_name?: string
  email: string
  /** Whether the address of the Zoom account is verified: `1` verified, `0` not. */
  verified: number
  /** The profile picture URL. */
  pic_url?: string
  /** `active`, `inactive` or `pending` (not activated yet). */
  status?: string
  /** The plan: `1` Basic, `2` Licensed, `4` Unassigned without Meetings Basic, `99` None. */
  type?: number
  account_id?: string
  account_number?: number
  role_name?: string
  role_id?: string
  timezone?: string
  language?: string
  dept?: string
  job_title?: string
  company?: string
  location?: string
  pmi?: number
  personal_meeting_url?: string
  created_at?: string
  last_login_time?: string
  login_types?: number[]
  [key: string]: unknown
}

/** Overrides of the Zoom provider; every field optional. */
export type ZoomUserConfig = OAuthUserConfig<ZoomProfile>

/** One line for the providers table in the docs. */
export const quirks = 'Scopes are set on the Marketplace app (user:read:user), none are sent'

/**
 * The Zoom provider.
 *
 * Defaults: no `scope` parameter (Zoom grants the scopes configured on the app in the
 * Marketplace, so the request need not name them); PKCE; client authentication
 * `client_secret_basic`, as Zoom's token endpoint requires. The user's `name` is the display name,
 * else first and last name; `email` only when Zoom says it is verified (`verified: 1`).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @see https://developers.zoom.us/docs/integrations/oauth/#step-1-request-user-authorization
 * @see https://developers.zoom.us/docs/integrations/oauth/#step-2-request-access-token
 */
export default function Zoom(options: ZoomUserConfig = {}): OAuthConfig<ZoomProfile> {
  assertOptions('Zoom', options)
  const defaults: OAuthConfig<ZoomProfile> = {
    id: 'zoom',
    name: 'Zoom',
    type: 'oauth',
    authorization: { url: 'https://zoom.us/oauth/authorize', params: {} },
    token: 'https://zoom.us/oauth/token',
    userinfo: 'https://api.zoom.us/v2/users/me',
    profile: (profile) => ({
      id: profile.id,
      name: profile.display_name || [profile.first_name, profile.last_name].filter(Boolean).join(' ') || null,
      email: profile.email || null,
      // Zoom's `verified` is 1 for a verified address, 0 otherwise.
      emailVerified: profile.verified === 1,
      image: profile.pic_url || null,
    }),
  }
  return withOverrides(defaults, options)
}

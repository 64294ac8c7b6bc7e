/**
 * Sign in with Spotify (Authorization Code flow with PKCE). No ID token: the profile is the Web
 * API's `GET /v1/me`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Spotify from 'portcullis/providers/spotify'
 *
 * // AUTH_SPOTIFY_ID and AUTH_SPOTIFY_SECRET fill clientId and clientSecret.
 * // In the Developer Dashboard (your app → Settings → Redirect URIs), add
 * // https://<your-site>/api/auth/callback/spotify.
 * const { handlers, auth } = Portcullis({ providers: [Spotify] })
 * ```
 * @see https://developer.spotify.com/documentation/web-api/tutorials/code-flow
 * @see https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile
 */
import type { OAuthConfig, OAuthUserConfig } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The current user as `GET /v1/me` returns it. `email` needs `user-read-email`; `country`,
 * `product` and `explicit_content` need `user-read-private`.
 * @see https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile
 */
export interface SpotifyProfile {
  /** The Spotify user id: stable. */
  id: string
  /** The name shown on the profile; `null` when not available. */
  display_name: string | null
  /** With `user-read-email`. Spotify says it is unverified: no proof it belongs to the user. */
  email?: string
  images: Array<{ url: string; height: number | null; width: number | null }>
  country?: string
  product?: string
  explicit_content?: { filter_enabled: boolean; filter_locked: boolean }
  external_urls: { spotify: string }
  followers?: { href: string | null; total: number }
  href: string
  type: 'user'
  uri: string
  [key: string]: unknown
}

/** Overrides of the Spotify provider; every field optional. */
export type SpotifyUserConfig = OAuthUserConfig<SpotifyProfile>

/** One line for the providers table in the docs. */
export const quirks = 'No e-mail: Spotify does not verify addresses (with user-read-email the address comes unverified and is not taken)'

/**
 * The Spotify provider.
 *
 * Defaults: no scope (`GET /v1/me` answers the id, display name and pictures without one); PKCE;
 * client authentication `client_secret_basic`. `email` is the address only with `user-read-email`,
 * and always `emailVerified: false`: Spotify documents the address as unverified, with no proof that
 * it belongs to the user, and an unverified address never becomes the user's address here (whoever
 * typed it at Spotify could claim an account here). `image` is the largest picture.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Playback and library access as the user (read the account's access_token):
 * Spotify({ authorization: { params: { scope: 'user-read-playback-state user-library-read' } } })
 * ```
 * @see https://developer.spotify.com/documentation/web-api/concepts/scopes
 */
export default function Spotify(options: SpotifyUserConfig = {}): OAuthConfig<SpotifyProfile> {
  assertOptions('Spotify', options)
  const defaults: OAuthConfig<SpotifyProfile> = {
    id: 'spotify',
    name: 'Spotify',
    type: 'oauth',
    authorization: { url: 'https://accounts.spotify.com/authorize', params: {} },
    token: 'https://accounts.spotify.com/api/token',
    userinfo: 'https://api.spotify.com/v1/me',
    profile: (profile) => ({
      id: profile.id,
      name: profile.display_name || null,
      email: profile.email || null,
      // Spotify documents the address as unverified: no proof it belongs to the user.
      emailVerified: false,
      image: largestImage(profile.images),
    }),
  }
  return withOverrides(defaults, options)
}

/** The URL of the widest picture (Spotify may leave sizes `null`: then the first). */
function largestImage(images: SpotifyProfile['images'] | undefined): string | null {
  if (!Array.isArray(images) || images.length === 0) return null
  const largest = images.reduce((best, image) => ((image.width ?? 0) > (best.width ?? 0) ? image : best))
  return largest.url || null
}

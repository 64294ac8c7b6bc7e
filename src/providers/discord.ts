/**
 * Sign in with Discord. Discord is OAuth 2 only (no ID token): the profile is the REST API's
 * `GET /users/@me`, and the picture is built from the avatar hash by Discord's CDN rules.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Discord from 'portcullis/providers/discord'
 *
 * // AUTH_DISCORD_ID and AUTH_DISCORD_SECRET fill clientId and clientSecret.
 * // In the Developer Portal (your application → OAuth2 → Redirects), add
 * // https://<your-site>/api/auth/callback/discord.
 * const { handlers, auth } = Portcullis({ providers: [Discord] })
 * ```
 * @see https://discord.com/developers/docs/topics/oauth2
 * @see https://discord.com/developers/docs/resources/user#get-current-user
 * @see https://discord.com/developers/docs/reference#image-formatting
 */
import type { OAuthConfig, OAuthUserConfig } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The user object as `GET /users/@me` returns it. `email` and `verified` need the `email` scope.
 * @see https://discord.com/developers/docs/resources/user#user-object
 */
export interface DiscordProfile {
  /** The user's id, a snowflake (a 64-bit integer as a string): stable, unlike `username`. */
  id: string
  /** Unique, but the user can change it. */
  username: string
  /** `"0"` for users on the new username system; the legacy four-digit tag otherwise. */
  discriminator: string
  /** The display name, when the user has set one. */
  global_name: string | null
  /** The avatar hash; `null` when the user has none (Discord then shows a default avatar). */
  avatar: string | null
  bot?: boolean
  system?: boolean
  mfa_enabled?: boolean
  banner?: string | null
  accent_color?: number | null
  locale?: string
  /** Whether the address in `email` has been verified (with the `email` scope). */
  verified?: boolean
  /** With the `email` scope; `null` for users without one (e.g. phone-only accounts). */
  email?: string | null
  flags?: number
  premium_type?: number
  public_flags?: number
  avatar_decoration_data?: { asset: string; sku_id: string } | null
  [key: string]: unknown
}

/** Overrides of the Discord provider; every field optional. */
export type DiscordUserConfig = OAuthUserConfig<DiscordProfile>

/** One line for the providers table in the docs. */
export const quirks = 'Image built from the avatar hash by the CDN rules (default avatar when none)'

/** Discord's CDN, where avatars are served. */
const CDN = 'https://cdn.discordapp.com'

/**
 * The Discord provider.
 *
 * Defaults: scope `identify email`; PKCE (Discord requires S256, which is what is sent); client
 * authentication `client_secret_basic`. The user's `name` is the display name, else the username;
 * `email` only when Discord says it is verified; `image` is the avatar (animated ones as GIF) or,
 * without one, the default avatar Discord itself shows.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Also list the user's servers (read them with the account's access_token):
 * Discord({ authorization: { params: { scope: 'identify email guilds' } } })
 * ```
 * @see https://discord.com/developers/docs/topics/oauth2#shared-resources-oauth2-scopes
 */
export default function Discord(options: DiscordUserConfig = {}): OAuthConfig<DiscordProfile> {
  assertOptions('Discord', options)
  const defaults: OAuthConfig<DiscordProfile> = {
    id: 'discord',
    name: 'Discord',
    type: 'oauth',
    authorization: { url: 'https://discord.com/oauth2/authorize', params: { scope: 'identify email' } },
    token: 'https://discord.com/api/oauth2/token',
    userinfo: 'https://discord.com/api/v10/users/@me',
    profile: (profile) => ({
      id: profile.id,
      name: profile.global_name ?? profile.username ?? null,
      email: profile.email || null,
      // Discord's `verified` says whether the user confirmed the address.
      emailVerified: profile.verified === true,
      image: discordAvatarUrl(profile),
    }),
  }
  return withOverrides(defaults, options)
}

/**
 * The URL of a user's avatar by Discord's CDN rules: `avatars/<id>/<hash>.png` (`.gif` when the
 * hash starts with `a_`, an animated avatar); without an avatar, the default one Discord shows,
 * `embed/avatars/<index>.png`, whose index is `(id >> 22) % 6` on the new username system
 * (discriminator `"0"`) and `discriminator % 5` for legacy tags.
 *
 * @example
 * ```ts
 * discordAvatarUrl({ id: '80351110224678912', avatar: '8342729096ea3675442027381ff50dfe' })
 * // 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png'
 * ```
 * @see https://discord.com/developers/docs/reference#image-formatting-cdn-endpoints
 */
export function discordAvatarUrl(user: Pick<DiscordProfile, 'id' | 'avatar'> & { discriminator?: string }): string {
  if (user.avatar) {
    const format = user.avatar.startsWith('a_') ? 'gif' : 'png'
    return `${CDN}/avatars/${user.id}/${user.avatar}.${format}`
  }
  return `${CDN}/embed/avatars/${defaultAvatarIndex(user)}.png`
}

function defaultAvatarIndex(user: { id: string; discriminator?: string }): number {
  const legacy = user.discriminator !== undefined && user.discriminator !== '0' ? Number.parseInt(user.discriminator, 10) : Number.NaN
  if (Number.isInteger(legacy)) return legacy % 5
  // Snowflakes exceed 2^53: BigInt keeps the shift exact.
  try {
    return Number((BigInt(user.id) >> 22n) % 6n)
  } catch {
    return 0
  }
}

/**
 * Sign in with Twitch, an OpenID Provider (`https://id.twitch.tv/oauth2`). Twitch puts only `sub`
 * and a few claims in the ID token unless the `claims` parameter asks for the rest, so this
 * provider asks for the address, its verification, the picture and the display name there.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Twitch from 'portcullis/providers/twitch'
 *
 * // AUTH_TWITCH_ID and AUTH_TWITCH_SECRET; in the Twitch developer console, add
 * // https://<your-site>/api/auth/callback/twitch as an OAuth Redirect URL.
 * const { handlers, auth } = Portcullis({ providers: [Twitch] })
 * ```
 * @see https://dev.twitch.tv/docs/authentication/getting-tokens-oidc/
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Claims requested with the OIDC claims parameter; client_secret_post'

/**
 * The claims of a Twitch ID token and userinfo answer, with the claims this provider requests.
 * @see https://dev.twitch.tv/docs/authentication/getting-tokens-oidc/#requesting-claims
 */
export interface TwitchProfile {
  iss: string
  /** The Twitch user id. */
  sub: string
  aud: string
  exp: number
  iat: number
  nonce?: string
  azp?: string
  /** The display name. */
  preferred_username?: string
  /** Needs the `user:read:email` scope. */
  email?: string
  email_verified?: boolean
  picture?: string
  updated_at?: string
  [claim: string]: unknown
}

/** Overrides of the Twitch provider; every field optional. */
export type TwitchUserConfig = OIDCUserConfig<TwitchProfile>

/** The claims asked of Twitch, in the ID token and at userinfo. */
const CLAIMS = { email: null, email_verified: null, picture: null, preferred_username: null }

/**
 * The Twitch provider. Defaults: scope `openid user:read:email` with a `claims` parameter for
 * `email`, `email_verified`, `picture`, `preferred_username`; `client_secret_post` (Twitch reads the
 * credentials from the body); the address only when `email_verified` is true.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 */
export default function Twitch(options: TwitchUserConfig = {}): OIDCConfig<TwitchProfile> {
  assertOptions('Twitch', options)
  const defaults: OIDCConfig<TwitchProfile> = {
    id: 'twitch',
    name: 'Twitch',
    type: 'oidc',
    issuer: 'https://id.twitch.tv/oauth2',
    authorization: { params: { scope: 'openid user:read:email', claims: JSON.stringify({ id_token: CLAIMS, userinfo: CLAIMS }) } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profile: (profile) => standardClaimsUser(profile, { name: profile.preferred_username ?? null }),
  }
  return withOverrides(defaults, options)
}

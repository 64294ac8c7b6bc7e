/**
 * Sign in with Patreon (API v2). Patreon is OAuth 2 only, with no ID token: the profile comes from
 * `GET /api/oauth2/v2/identity`, a JSON:API document whose fields must be asked for by name
 * (`fields[user]=...`); without them Patreon returns only the id.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Patreon from 'portcullis/providers/patreon'
 *
 * // AUTH_PATREON_ID and AUTH_PATREON_SECRET fill clientId and clientSecret. At
 * // https://www.patreon.com/portal/registration/register-clients register a client (API version 2)
 * // with the redirect URI https://<your-site>/api/auth/callback/patreon.
 * const { handlers, auth } = Portcullis({ providers: [Patreon] })
 * ```
 * @see https://docs.patreon.com/#oauth
 * @see https://docs.patreon.com/#get-api-oauth2-v2-identity
 * @see https://docs.patreon.com/#user-v2
 */
import type { OAuthConfig, OAuthUserConfig } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The attributes of a Patreon `user` resource (API v2) that can be asked for in `fields[user]`.
 * @see https://docs.patreon.com/#user-v2
 */
export interface PatreonUserAttributes {
  /** Only with the `identity[email]` scope. */
  email?: string
  is_email_verified?: boolean
  full_name?: string
  first_name?: string | null
  last_name?: string | null
  vanity?: string | null
  image_url?: string
  thumb_url?: string
  url?: string
  created?: string
  about?: string | null
  [key: string]: unknown
}

/**
 * The `GET /api/oauth2/v2/identity` document.
 * @see https://docs.patreon.com/#get-api-oauth2-v2-identity
 */
export interface PatreonProfile {
  data: {
    /** The user's id (digits, as a string): stable, the key of the account. */
    id: string
    type: 'user'
    attributes: PatreonUserAttributes
    relationships?: Record<string, unknown>
  }
  included?: unknown[]
  links?: { self?: string }
  [key: string]: unknown
}

/** Overrides of the Patreon provider; every field optional. */
export type PatreonUserConfig = OAuthUserConfig<PatreonProfile>

/** One line for the providers table. */
export const quirks = 'Profile fields asked by name (fields[user]); e-mail only when is_email_verified'

/** The `user` attributes the mapping needs. */
const USER_FIELDS = 'email,is_email_verified,full_name,vanity,image_url'

/**
 * The Patreon provider.
 *
 * Defaults: scope `identity identity[email]`; client authentication `client_secret_post` (Patreon
 * documents the client id and secret as form parameters); checks PKCE and `state` (Patreon does not
 * document PKCE). The address is taken only when Patreon says it is verified (`is_email_verified`).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Memberships too: ask for the scope and the fields (userinfo replaces the default as a whole).
 * Patreon({
 *   authorization: { params: { scope: 'identity identity[email] identity.memberships' } },
 *   userinfo: { url: 'https://www.patreon.com/api/oauth2/v2/identity', params: { include: 'memberships', 'fields[user]': 'email,is_email_verified,full_name,vanity,image_url', 'fields[member]': 'patron_status' } },
 * })
 * ```
 * @see https://docs.patreon.com/#scopes
 */
export default function Patreon(options: PatreonUserConfig = {}): OAuthConfig<PatreonProfile> {
  assertOptions('Patreon', options)
  const defaults: OAuthConfig<PatreonProfile> = {
    id: 'patreon',
    name: 'Patreon',
    type: 'oauth',
    authorization: { url: 'https://www.patreon.com/oauth2/authorize', params: { scope: 'identity identity[email]' } },
    token: 'https://www.patreon.com/api/oauth2/token',
    userinfo: { url: 'https://www.patreon.com/api/oauth2/v2/identity', params: { 'fields[user]': USER_FIELDS } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['pkce', 'state'],
    profile: (profile) => {
      const user = profile.data
      const attributes = user.attributes ?? {}
      return {
        id: String(user.id),
        name: attributes.full_name || attributes.vanity || null,
        email: attributes.email || null,
        emailVerified: attributes.is_email_verified === true,
        image: attributes.image_url || null,
      }
    },
  }
  return withOverrides(defaults, options)
}

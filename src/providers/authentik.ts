/**
 * Sign in with authentik, an OpenID Provider: each application has its own issuer,
 * `https://<host>/application/o/<application slug>/` (with the trailing slash).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Authentik from 'portcullis/providers/authentik'
 *
 * // AUTH_AUTHENTIK_ID, AUTH_AUTHENTIK_SECRET,
 * // AUTH_AUTHENTIK_ISSUER=https://auth.example.com/application/o/my-app/
 * // In the OAuth2/OpenID provider, add https://<your-site>/api/auth/callback/authentik to the redirect URIs.
 * const { handlers, auth } = Portcullis({ providers: [Authentik] })
 * ```
 * @see https://docs.goauthentik.io/docs/add-secure-apps/providers/oauth2/
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer per application: https://host/application/o/<slug>/ (trailing slash)'

/**
 * The claims of an authentik ID token and userinfo answer (default scope mappings).
 * @see https://docs.goauthentik.io/docs/add-secure-apps/providers/oauth2/#default--special-scopes
 */
export interface AuthentikProfile {
  iss: string
  /** By default a hash of the user id, per the provider's "subject mode" setting. */
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  auth_time?: number
  nonce?: string
  acr?: string
  amr?: string[]
  name?: string
  given_name?: string
  preferred_username?: string
  nickname?: string
  groups?: string[]
  email?: string
  email_verified?: boolean
  [claim: string]: unknown
}

/** Overrides of the authentik provider; give `issuer` (or `AUTH_AUTHENTIK_ISSUER`). */
export type AuthentikUserConfig = OIDCUserConfig<AuthentikProfile>

/**
 * The authentik provider. Defaults: scope `openid profile email`; the profile is the ID token's
 * claims completed from userinfo; the address only when `email_verified` is true: authentik
 * sends what its `email` scope mapping says, so make that mapping send `true` only for addresses
 * authentik has confirmed.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 */
export default function Authentik(options: AuthentikUserConfig = {}): OIDCConfig<AuthentikProfile> {
  assertOptions('Authentik', options)
  const defaults: OIDCConfig<AuthentikProfile> = {
    id: 'authentik',
    name: 'authentik',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    // authentik's default scope mappings send no picture claim.
    profile: (profile) => standardClaimsUser(profile, { image: null }),
  }
  return withOverrides(defaults, options)
}

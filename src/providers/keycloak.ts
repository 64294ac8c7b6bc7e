/**
 * Sign in with Keycloak, an OpenID Provider: one issuer per realm,
 * `https://<host>/realms/<realm>` (Keycloak 17+; older versions add `/auth` before `/realms`).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Keycloak from 'portcullis/providers/keycloak'
 *
 * // AUTH_KEYCLOAK_ID, AUTH_KEYCLOAK_SECRET, AUTH_KEYCLOAK_ISSUER=https://sso.example.com/realms/acme
 * // In the realm's client (Client authentication on), add https://<your-site>/api/auth/callback/keycloak
 * // to "Valid redirect URIs".
 * const { handlers, auth } = Portcullis({ providers: [Keycloak] })
 * ```
 * @see https://www.keycloak.org/docs/latest/server_admin/#con-oidc_server_administration_guide
 * @see https://www.keycloak.org/securing-apps/oidc-layers
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer per realm: https://host/realms/<realm>; e-mail only when email_verified'

/**
 * The claims of a Keycloak ID token and userinfo answer with the default client scopes
 * (`profile`, `email`); more come with the realm's protocol mappers.
 * @see https://www.keycloak.org/docs/latest/server_admin/#_oidc_token_role_mappings
 */
export interface KeycloakProfile {
  iss: string
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  auth_time?: number
  nonce?: string
  /** The client the token was issued to. */
  azp?: string
  sid?: string
  acr?: string
  name?: string
  given_name?: string
  family_name?: string
  preferred_username?: string
  email?: string
  email_verified?: boolean
  picture?: string
  locale?: string
  [claim: string]: unknown
}

/** Overrides of the Keycloak provider; give `issuer` (or `AUTH_KEYCLOAK_ISSUER`). */
export type KeycloakUserConfig = OIDCUserConfig<KeycloakProfile>

/**
 * The Keycloak provider. Defaults: scope `openid profile email`; the profile is the ID token's
 * claims completed from userinfo. The address is used only when `email_verified` is true: a realm
 * admin, or the user at registration, can set an address nobody confirmed.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 */
export default function Keycloak(options: KeycloakUserConfig = {}): OIDCConfig<KeycloakProfile> {
  assertOptions('Keycloak', options)
  const defaults: OIDCConfig<KeycloakProfile> = {
    id: 'keycloak',
    name: 'Keycloak',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile),
  }
  return withOverrides(defaults, options)
}

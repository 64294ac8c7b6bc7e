/**
 * Sign in with Okta, an OpenID Provider. The issuer names the authorization server: the org
 * authorization server `https://<org>.okta.com`, or a custom one, `https://<org>.okta.com/oauth2/default`
 * (or `/oauth2/<id>`). Use a custom one to add claims or access tokens for your own APIs; the org
 * server's access tokens are only for Okta's APIs.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Okta from 'portcullis/providers/okta'
 *
 * // AUTH_OKTA_ID, AUTH_OKTA_SECRET, AUTH_OKTA_ISSUER=https://acme.okta.com/oauth2/default
 * // In the app integration, add https://<your-site>/api/auth/callback/okta to "Sign-in redirect URIs".
 * const { handlers, auth } = Portcullis({ providers: [Okta] })
 * ```
 * @see https://developer.okta.com/docs/concepts/auth-servers/
 * @see https://developer.okta.com/docs/reference/api/oidc/#userinfo
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer is the org (https://org.okta.com) or a custom authorization server (/oauth2/default)'

/**
 * The claims of an Okta ID token and `/v1/userinfo` answer.
 * @see https://developer.okta.com/docs/reference/api/oidc/#response-example-success-6
 */
export interface OktaProfile {
  iss: string
  sub: string
  aud: string
  exp: number
  iat: number
  nonce?: string
  auth_time?: number
  amr?: string[]
  idp?: string
  ver?: number
  jti?: string
  name?: string
  given_name?: string
  family_name?: string
  middle_name?: string
  nickname?: string
  /** The Okta login, often an address. */
  preferred_username?: string
  profile?: string
  picture?: string
  website?: string
  gender?: string
  birthdate?: string
  zoneinfo?: string
  locale?: string
  updated_at?: number
  email?: string
  email_verified?: boolean
  phone_number?: string
  [claim: string]: unknown
}

/** Overrides of the Okta provider; give `issuer` (or `AUTH_OKTA_ISSUER`). */
export type OktaUserConfig = OIDCUserConfig<OktaProfile>

/**
 * The Okta provider. Defaults: scope `openid profile email`; the profile is the ID token's claims
 * completed from userinfo; the address only when `email_verified` is true.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 */
export default function Okta(options: OktaUserConfig = {}): OIDCConfig<OktaProfile> {
  assertOptions('Okta', options)
  const defaults: OIDCConfig<OktaProfile> = {
    id: 'okta',
    name: 'Okta',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile),
  }
  return withOverrides(defaults, options)
}

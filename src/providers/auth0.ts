/**
 * Sign in with Auth0, an OpenID Provider: the issuer is your tenant's domain (or custom domain)
 * with a trailing slash, `https://<tenant>.<region>.auth0.com/`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Auth0 from 'portcullis/providers/auth0'
 *
 * // AUTH_AUTH0_ID, AUTH_AUTH0_SECRET, AUTH_AUTH0_ISSUER=https://acme.us.auth0.com/
 * // (or Auth0({ domain: 'acme.us.auth0.com' })). In the application's settings, add
 * // https://<your-site>/api/auth/callback/auth0 to "Allowed Callback URLs".
 * const { handlers, auth } = Portcullis({ providers: [Auth0] })
 * ```
 * @see https://auth0.com/docs/authenticate/protocols/openid-connect-protocol
 * @see https://auth0.com/docs/api/authentication#user-profile
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer https://<domain>/ (trailing slash; domain option); e-mail only when email_verified'

/**
 * The claims of an Auth0 ID token and `/userinfo` answer (standard claims; `sub` is
 * `<connection>|<id>`, e.g. `auth0|64f…` or `google-oauth2|1034…`).
 * @see https://auth0.com/docs/api/authentication#user-profile
 * @see https://auth0.com/docs/secure/tokens/id-tokens/id-token-structure
 */
export interface Auth0Profile {
  iss: string
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  nonce?: string
  sid?: string
  name?: string
  given_name?: string
  family_name?: string
  middle_name?: string
  nickname?: string
  preferred_username?: string
  picture?: string
  updated_at?: string
  email?: string
  email_verified?: boolean
  locale?: string
  [claim: string]: unknown
}

/** Overrides of the Auth0 provider, plus the tenant's `domain`. */
export interface Auth0UserConfig extends OIDCUserConfig<Auth0Profile> {
  /** Your tenant's (or custom) domain, e.g. `acme.us.auth0.com`: the issuer becomes `https://<domain>/`. */
  domain?: string
}

/**
 * The Auth0 provider. Defaults: scope `openid profile email`; the profile is the ID token's claims
 * completed from `/userinfo`. The address is used only when `email_verified` is true (database
 * connections sign users up before they confirm it).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 * @throws TypeError when `domain` is not a host name.
 */
export default function Auth0(options: Auth0UserConfig = {}): OIDCConfig<Auth0Profile> {
  assertOptions('Auth0', options)
  const { domain, ...overrides } = options
  const defaults: OIDCConfig<Auth0Profile> = {
    id: 'auth0',
    name: 'Auth0',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile, { name: profile.name ?? profile.nickname ?? null }),
  }
  if (domain !== undefined) {
    if (typeof domain !== 'string' || !/^[A-Za-z0-9.-]+(:\d+)?$/.test(domain)) {
      throw new TypeError(`Auth0(options): domain must be your tenant's host name, e.g. "acme.us.auth0.com"; got ${JSON.stringify(domain)}.`)
    }
    defaults.issuer = `https://${domain}/`
  }
  return withOverrides(defaults, overrides)
}

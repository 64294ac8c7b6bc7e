/**
 * Sign in with ZITADEL, an OpenID Provider: the issuer is your instance's domain,
 * `https://<instance>.zitadel.cloud` or your own.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Zitadel from 'portcullis/providers/zitadel'
 *
 * // AUTH_ZITADEL_ID, AUTH_ZITADEL_SECRET, AUTH_ZITADEL_ISSUER=https://acme-abc123.zitadel.cloud
 * // A "Web" application (authentication method Basic or Post); add
 * // https://<your-site>/api/auth/callback/zitadel to its redirect URIs.
 * const { handlers, auth } = Portcullis({ providers: [Zitadel] })
 * ```
 * @see https://zitadel.com/docs/apis/openidoauth/endpoints
 * @see https://zitadel.com/docs/apis/openidoauth/claims
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer is the instance domain; project roles need the urn:zitadel:iam:org:project:roles scope'

/**
 * The claims of a ZITADEL ID token and userinfo answer.
 * @see https://zitadel.com/docs/apis/openidoauth/claims
 */
export interface ZitadelProfile {
  iss: string
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  nonce?: string
  name?: string
  given_name?: string
  family_name?: string
  nickname?: string
  preferred_username?: string
  gender?: string
  locale?: string
  picture?: string
  updated_at?: number
  email?: string
  email_verified?: boolean
  phone_number?: string
  phone_number_verified?: boolean
  'urn:zitadel:iam:org:id'?: string
  'urn:zitadel:iam:org:project:roles'?: Record<string, Record<string, string>>
  'urn:zitadel:iam:user:resourceowner:id'?: string
  'urn:zitadel:iam:user:resourceowner:name'?: string
  [claim: string]: unknown
}

/** Overrides of the ZITADEL provider; give `issuer` (or `AUTH_ZITADEL_ISSUER`). */
export type ZitadelUserConfig = OIDCUserConfig<ZitadelProfile>

/**
 * The ZITADEL provider. Defaults: scope `openid profile email`; the profile is the ID token's
 * claims completed from userinfo; the address only when `email_verified` is true.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 */
export default function Zitadel(options: ZitadelUserConfig = {}): OIDCConfig<ZitadelProfile> {
  assertOptions('Zitadel', options)
  const defaults: OIDCConfig<ZitadelProfile> = {
    id: 'zitadel',
    name: 'ZITADEL',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile),
  }
  return withOverrides(defaults, options)
}

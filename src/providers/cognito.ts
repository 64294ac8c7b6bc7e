/**
 * Sign in with Amazon Cognito user pools, an OpenID Provider. The issuer is the user pool,
 * `https://cognito-idp.<region>.amazonaws.com/<userPoolId>`; its discovery document points the
 * authorization, token and userinfo endpoints at the pool's domain (the hosted UI / managed login,
 * `https://<prefix>.auth.<region>.amazoncognito.com` or your custom domain), so the pool needs a
 * domain configured for sign-in to work.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Cognito from 'portcullis/providers/cognito'
 *
 * // AUTH_COGNITO_ID, AUTH_COGNITO_SECRET (an app client with a secret), and the pool:
 * // AUTH_COGNITO_ISSUER=https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123
 * // or Cognito({ userPoolId: 'eu-west-1_AbCdEf123' }). Add https://<your-site>/api/auth/callback/cognito
 * // to the app client's "Allowed callback URLs", with the openid, profile and email scopes.
 * const { handlers, auth } = Portcullis({ providers: [Cognito] })
 * ```
 * @see https://docs.aws.amazon.com/cognito/latest/developerguide/amazon-cognito-user-pools-using-the-id-token.html
 * @see https://docs.aws.amazon.com/cognito/latest/developerguide/userinfo-endpoint.html
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'Issuer per user pool (userPoolId option); endpoints and userinfo on the pool domain, which must exist'

/**
 * The claims of a Cognito ID token (and userinfo answer). Attribute values may be strings at the
 * userinfo endpoint (`"email_verified": "true"`).
 * @see https://docs.aws.amazon.com/cognito/latest/developerguide/amazon-cognito-user-pools-using-the-id-token.html
 */
export interface CognitoProfile {
  iss: string
  /** The user's stable id (a UUID). */
  sub: string
  aud: string
  exp: number
  iat: number
  auth_time?: number
  token_use?: 'id'
  nonce?: string
  'cognito:username'?: string
  'cognito:groups'?: string[]
  name?: string
  given_name?: string
  family_name?: string
  preferred_username?: string
  picture?: string
  email?: string
  email_verified?: boolean | 'true' | 'false'
  phone_number?: string
  phone_number_verified?: boolean | 'true' | 'false'
  identities?: unknown
  [claim: string]: unknown
}

/** Overrides of the Cognito provider, plus the user pool. */
export interface CognitoUserConfig extends OIDCUserConfig<CognitoProfile> {
  /** The user pool id, `<region>_<id>` (e.g. `eu-west-1_AbCdEf123`): sets the issuer. */
  userPoolId?: string
}

/**
 * The Cognito provider. Defaults: scope `openid profile email`; the profile is the ID token's
 * claims completed from the userinfo endpoint; the name is `name`, else given and family names,
 * else the user name; the address only when `email_verified` is true.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 * @throws TypeError when `userPoolId` is not `<region>_<id>`.
 */
export default function Cognito(options: CognitoUserConfig = {}): OIDCConfig<CognitoProfile> {
  assertOptions('Cognito', options)
  const { userPoolId, ...overrides } = options
  const defaults: OIDCConfig<CognitoProfile> = {
    id: 'cognito',
    name: 'Cognito',
    type: 'oidc',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile, {
      name: profile.name ?? ([profile.given_name, profile.family_name].filter(Boolean).join(' ') || profile['cognito:username'] || null),
      // Cognito's userinfo gives attribute values as strings ("true").
      emailVerified: profile.email_verified === true || profile.email_verified === 'true',
    }),
  }
  if (userPoolId !== undefined) {
    const region = typeof userPoolId === 'string' ? /^([a-z]{2}(?:-[a-z]+)+-\d+)_[A-Za-z0-9]+$/.exec(userPoolId)?.[1] : undefined
    if (!region) throw new TypeError(`Cognito(options): userPoolId must be "<region>_<id>", e.g. "eu-west-1_AbCdEf123"; got ${JSON.stringify(userPoolId)}.`)
    defaults.issuer = `https://cognito-idp.${region}.amazonaws.com/${userPoolId}`
  }
  return withOverrides(defaults, overrides)
}

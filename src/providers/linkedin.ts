/**
 * Sign in with LinkedIn ("Sign In with LinkedIn using OpenID Connect"): an OpenID Connect provider
 * whose issuer is `https://www.linkedin.com/oauth` (endpoints and keys discovered from it), with
 * quirks: client authentication in the request body only, no PKCE for web apps, no nonce.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import LinkedIn from 'portcullis/providers/linkedin'
 *
 * // AUTH_LINKEDIN_ID and AUTH_LINKEDIN_SECRET fill clientId and clientSecret.
 * // In the Developer Portal, add the product "Sign In with LinkedIn using OpenID Connect" to the
 * // app, and under Auth add https://<your-site>/api/auth/callback/linkedin as a redirect URL.
 * const { handlers, auth } = Portcullis({ providers: [LinkedIn] })
 * ```
 * @see https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 * @see https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/**
 * The claims of a LinkedIn ID token and of its userinfo answer (`GET https://api.linkedin.com/v2/userinfo`).
 * @see https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2#response-body-schema
 */
export interface LinkedInProfile {
  /** The member's id for your app: stable, the key to use. */
  sub: string
  name: string
  given_name: string
  family_name: string
  /** The profile picture URL; absent when the member has none. */
  picture?: string
  /** `{ country, language }` in the userinfo answer; a string such as `"en_US"` in some ID tokens. */
  locale?: { country: string; language: string } | string
  /** With the `email` scope. */
  email?: string
  email_verified?: boolean
  iss?: string
  aud?: string
  iat?: number
  exp?: number
  [claim: string]: unknown
}

/** Overrides of the LinkedIn provider; every field optional. */
export type LinkedInUserConfig = OIDCUserConfig<LinkedInProfile>

/** One line for the providers table in the docs. */
export const quirks = 'Issuer https://www.linkedin.com/oauth; client_secret_post; state instead of PKCE and nonce'

/**
 * The LinkedIn provider.
 *
 * Defaults: issuer `https://www.linkedin.com/oauth` (what LinkedIn's discovery document and ID
 * tokens say since April 2024; before, `https://www.linkedin.com`); scope `openid profile email`;
 * client authentication `client_secret_post` (the only method its discovery document lists); checks
 * `state` only: LinkedIn refuses the token request of a web app that sends a PKCE `code_verifier`
 * (`invalid_client`), and does not document `nonce` (an ID token without the nonce sent would be
 * refused). The ID token is still validated (signature, `iss`, `aud`, `exp`). `email` only when
 * LinkedIn says it is verified.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @see https://www.linkedin.com/oauth/.well-known/openid-configuration
 */
export default function LinkedIn(options: LinkedInUserConfig = {}): OIDCConfig<LinkedInProfile> {
  assertOptions('LinkedIn', options)
  const defaults: OIDCConfig<LinkedInProfile> = {
    id: 'linkedin',
    name: 'LinkedIn',
    type: 'oidc',
    issuer: 'https://www.linkedin.com/oauth',
    authorization: { params: { scope: 'openid profile email' } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['state'],
    profile: (profile) => standardClaimsUser(profile, {
      name: profile.name || [profile.given_name, profile.family_name].filter(Boolean).join(' ') || null,
      image: profile.picture || null,
    }),
  }
  return withOverrides(defaults, options)
}

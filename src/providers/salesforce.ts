/**
 * Sign in with Salesforce, an OpenID Connect provider: the endpoints and keys are discovered from
 * `https://login.salesforce.com` (production orgs), the ID token is validated, and the profile is
 * its claims completed from Salesforce's userinfo endpoint.
 *
 * Sandboxes sign in at `https://test.salesforce.com`, and orgs with My Domain (or an Experience
 * Cloud site) at their own domain: pass that as `issuer`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Salesforce from 'portcullis/providers/salesforce'
 *
 * // AUTH_SALESFORCE_ID and AUTH_SALESFORCE_SECRET fill clientId and clientSecret (the connected
 * // app's Consumer Key and Consumer Secret). In the connected app, enable OAuth settings with the
 * // openid, profile and email scopes and the callback URL https://<your-site>/api/auth/callback/salesforce.
 * const { handlers, auth } = Portcullis({ providers: [Salesforce] })
 *
 * // A sandbox, or a My Domain login:
 * Salesforce({ issuer: 'https://test.salesforce.com' })
 * Salesforce({ issuer: 'https://acme.my.salesforce.com' })
 * ```
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid.htm
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_userinfo_endpoint.htm
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid_discovery_endpoint.htm
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/**
 * The claims of a Salesforce ID token completed by its userinfo response (the fields a sign-in
 * uses; the response has more, e.g. `urls`, `custom_attributes`).
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_userinfo_endpoint.htm
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid.htm
 */
export interface SalesforceProfile {
  iss?: string
  aud?: string
  /** The identity URL, `https://login.salesforce.com/id/<org id>/<user id>` (its host follows the login host). */
  sub: string
  /** The 18-character user id (userinfo). Unique across orgs; the key of the account. */
  user_id?: string
  /** The 18-character org id (userinfo). */
  organization_id?: string
  /** The Salesforce username, which looks like an address but need not receive mail. */
  preferred_username?: string
  nickname?: string
  name?: string
  given_name?: string
  family_name?: string
  email?: string
  email_verified?: boolean
  zoneinfo?: string
  locale?: string
  /** Profile photo URLs; loading them needs a Salesforce session or the access token. */
  picture?: string
  photos?: { picture?: string; thumbnail?: string }
  profile?: string
  user_type?: string
  active?: boolean
  updated_at?: string
  [claim: string]: unknown
}

/** Overrides of the Salesforce provider; every field optional. `issuer` selects a sandbox or My Domain. */
export type SalesforceUserConfig = OIDCUserConfig<SalesforceProfile>

/** One line for the providers table. */
export const quirks = 'Sandbox or My Domain: pass issuer (https://test.salesforce.com, https://<domain>.my.salesforce.com); e-mail only when email_verified'

/**
 * The Salesforce provider.
 *
 * Defaults: issuer `https://login.salesforce.com`; scope `openid profile email`; client
 * authentication `client_secret_basic`; PKCE and nonce. `id` is the 18-character `user_id`
 * (from userinfo, else the last segment of the `sub` identity URL), so the same user keeps one
 * account whichever login host (production, My Domain) signed them in. The address is taken only
 * when Salesforce's `email_verified` is true.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key. `issuer: process.env.X` left unset keeps the default.
 * @see https://help.salesforce.com/s/articleView?id=sf.remoteaccess_oauth_web_server_flow.htm
 */
export default function Salesforce(options: SalesforceUserConfig = {}): OIDCConfig<SalesforceProfile> {
  assertOptions('Salesforce', options)
  const defaults: OIDCConfig<SalesforceProfile> = {
    id: 'salesforce',
    name: 'Salesforce',
    type: 'oidc',
    issuer: 'https://login.salesforce.com',
    authorization: { params: { scope: 'openid profile email' } },
    // Salesforce's userinfo carries email_verified; absent (e.g. ID token only) is not a yes.
    profile: (profile) => standardClaimsUser(profile, {
      id: salesforceUserId(profile),
      image: profile.picture ?? profile.photos?.picture ?? null,
    }),
  }
  return withOverrides(defaults, options)
}

/** `user_id`, else the user id at the end of the identity URL in `sub`, else `sub` itself. */
function salesforceUserId(profile: SalesforceProfile): string {
  if (typeof profile.user_id === 'string' && profile.user_id) return profile.user_id
  const fromIdentityUrl = /\/id\/[^/]+\/([^/?#]+)\/?$/.exec(profile.sub)
  return fromIdentityUrl?.[1] ?? profile.sub
}

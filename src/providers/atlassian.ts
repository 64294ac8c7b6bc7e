/**
 * Sign in with an Atlassian account (Jira, Confluence, Bitbucket's account system), through
 * Atlassian's OAuth 2.0 (3LO) apps. Not OpenID Connect: no ID token; the profile comes from the
 * User Identity API, `GET https://api.atlassian.com/me` (the `read:me` scope).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Atlassian from 'portcullis/providers/atlassian'
 *
 * // AUTH_ATLASSIAN_ID and AUTH_ATLASSIAN_SECRET fill clientId and clientSecret. In the developer
 * // console (https://developer.atlassian.com/console/myapps/), add the User identity API with its
 * // read:me permission, and under Authorization set the callback URL to
 * // https://<your-site>/api/auth/callback/atlassian.
 * const { handlers, auth } = Portcullis({ providers: [Atlassian] })
 * ```
 * @see https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/
 * @see https://developer.atlassian.com/cloud/confluence/oauth-2-3lo-apps/#how-do-i-retrieve-the-public-profile-of-the-authenticated-user-
 */
import type { OAuthConfig, OAuthUserConfig } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The authenticated user as `GET https://api.atlassian.com/me` returns it.
 * @see https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#how-do-i-retrieve-the-public-profile-of-the-authenticated-user-
 */
export interface AtlassianProfile {
  /** `atlassian` for a person; `app` or `customer` for other kinds of account. */
  account_type: string
  /** The Atlassian account id: stable, the same in every Atlassian product. */
  account_id: string
  /** Subject to the user's profile visibility settings; may be empty. */
  email?: string
  /** When present, whether Atlassian has verified `email`. */
  email_verified?: boolean
  name: string
  picture?: string
  account_status: 'active' | 'inactive' | 'closed' | string
  nickname?: string
  zoneinfo?: string
  locale?: string
  extended_profile?: { job_title?: string; organization?: string; department?: string; location?: string; [key: string]: unknown }
  [key: string]: unknown
}

/** Overrides of the Atlassian provider; every field optional. */
export type AtlassianUserConfig = OAuthUserConfig<AtlassianProfile>

/** One line for the providers table. */
export const quirks = 'audience=api.atlassian.com and prompt=consent on every sign-in; refresh token only with offline_access; e-mail only when email_verified'

/**
 * The Atlassian provider.
 *
 * Defaults: scope `read:me`; the authorization parameters Atlassian requires, `audience=api.atlassian.com`
 * and `prompt=consent` (Atlassian shows its consent screen on each sign-in); client authentication
 * `client_secret_post` (Atlassian documents the client id and secret as body parameters); checks
 * PKCE and `state` (Atlassian requires `state` and does not document PKCE). `id` is the
 * `account_id`; `email` is `null` when empty or hidden, and taken only when `email_verified` is true.
 *
 * Add `offline_access` to the scope for a refresh token, and the product scopes (e.g.
 * `read:jira-work`) to call product APIs with the account's token.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * Atlassian({ authorization: { params: { scope: 'read:me offline_access read:jira-work' } } })
 * ```
 * @see https://developer.atlassian.com/cloud/jira/platform/scopes-for-oauth-2-3LO-and-forge-apps/
 */
export default function Atlassian(options: AtlassianUserConfig = {}): OAuthConfig<AtlassianProfile> {
  assertOptions('Atlassian', options)
  const defaults: OAuthConfig<AtlassianProfile> = {
    id: 'atlassian',
    name: 'Atlassian',
    type: 'oauth',
    authorization: {
      url: 'https://auth.atlassian.com/authorize',
      params: { audience: 'api.atlassian.com', prompt: 'consent', scope: 'read:me' },
    },
    token: 'https://auth.atlassian.com/oauth/token',
    userinfo: 'https://api.atlassian.com/me',
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: profile.account_id,
      name: profile.name || profile.nickname || null,
      email: profile.email || null,
      // Only Atlassian's own email_verified: true vouches for the address; absent is not a yes.
      emailVerified: profile.email_verified === true,
      image: profile.picture || null,
    }),
  }
  return withOverrides(defaults, options)
}

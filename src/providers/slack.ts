/**
 * Sign in with Slack ("Sign in with Slack", OpenID Connect): the endpoints and keys are discovered
 * from `https://slack.com`, the ID token is validated, and the profile is its claims (Slack's own
 * under `https://slack.com/...` names: workspace, images) completed from `openid.connect.userInfo`.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Slack from 'portcullis/providers/slack'
 *
 * // AUTH_SLACK_ID and AUTH_SLACK_SECRET fill clientId and clientSecret.
 * // In the app's settings (OAuth & Permissions → Redirect URLs), add
 * // https://<your-site>/api/auth/callback/slack, and the user token scopes openid, profile, email.
 * const { handlers, auth } = Portcullis({ providers: [Slack] })
 * ```
 * @see https://api.slack.com/authentication/sign-in-with-slack
 * @see https://api.slack.com/methods/openid.connect.token
 * @see https://api.slack.com/methods/openid.connect.userInfo
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/**
 * The claims of a Slack ID token (and of `openid.connect.userInfo`, which adds `ok`).
 * @see https://api.slack.com/authentication/sign-in-with-slack#response
 */
export interface SlackProfile {
  /** `https://slack.com`. */
  iss: string
  /** The user's id (`U...`), the same as `https://slack.com/user_id`. */
  sub: string
  aud: string
  exp: number
  iat: number
  auth_time?: number
  nonce?: string
  at_hash?: string
  'https://slack.com/user_id': string
  /** The workspace the user signed in to (`T...`). */
  'https://slack.com/team_id': string
  /** The Enterprise Grid organization, when there is one. */
  'https://slack.com/enterprise_id'?: string
  /** With the `email` scope. */
  email?: string
  email_verified?: boolean
  date_email_verified?: number
  /** With the `profile` scope. */
  name?: string
  picture?: string
  given_name?: string
  family_name?: string
  locale?: string
  'https://slack.com/team_name'?: string
  'https://slack.com/team_domain'?: string
  'https://slack.com/user_image_24'?: string
  'https://slack.com/user_image_32'?: string
  'https://slack.com/user_image_48'?: string
  'https://slack.com/user_image_72'?: string
  'https://slack.com/user_image_192'?: string
  'https://slack.com/user_image_512'?: string
  'https://slack.com/team_image_34'?: string
  'https://slack.com/team_image_44'?: string
  'https://slack.com/team_image_68'?: string
  'https://slack.com/team_image_88'?: string
  'https://slack.com/team_image_102'?: string
  'https://slack.com/team_image_132'?: string
  'https://slack.com/team_image_230'?: string
  'https://slack.com/team_image_default'?: boolean
  /** Only in the userinfo answer. */
  ok?: boolean
  [claim: string]: unknown
}

/** Overrides of the Slack provider; every field optional. */
export type SlackUserConfig = OIDCUserConfig<SlackProfile>

/** One line for the providers table in the docs. */
export const quirks = 'No PKCE (state and nonce): Slack fails PKCE with a client secret; client_secret_post'

/**
 * The Slack provider.
 *
 * Defaults: issuer `https://slack.com`; scope `openid profile email`; client authentication
 * `client_secret_post`; checks `state` and `nonce`, not PKCE: Slack treats an app with PKCE on as a
 * public client and answers a code exchange carrying both a `code_verifier` and the client secret
 * with `internal_error`, while the confidential exchange works whether PKCE is on or not. `email`
 * only when Slack says it is verified. To preselect a workspace, add `team` to the authorization params.
 *
 * The user id (`sub`) names the user in one workspace; the workspace is the
 * `https://slack.com/team_id` claim (read it in the `signIn` or `jwt` callback to admit only yours).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * Slack({ authorization: { params: { team: 'T0123ABCD' } } })
 * ```
 * @see https://api.slack.com/authentication/sign-in-with-slack#request
 */
export default function Slack(options: SlackUserConfig = {}): OIDCConfig<SlackProfile> {
  assertOptions('Slack', options)
  const defaults: OIDCConfig<SlackProfile> = {
    id: 'slack',
    name: 'Slack',
    type: 'oidc',
    issuer: 'https://slack.com',
    authorization: { params: { scope: 'openid profile email' } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    checks: ['state', 'nonce'],
    profile: (profile) => standardClaimsUser(profile, {
      name: profile.name || null,
      image: profile.picture || profile['https://slack.com/user_image_512'] || null,
    }),
  }
  return withOverrides(defaults, options)
}

/**
 * Sign in with GitLab (GitLab.com, or a self-managed or Dedicated instance), an OpenID Connect
 * provider: the endpoints and keys are discovered from the instance's issuer, the ID token is
 * validated, and the profile is its claims completed from GitLab's userinfo endpoint.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import GitLab from 'portcullis/providers/gitlab'
 *
 * // AUTH_GITLAB_ID and AUTH_GITLAB_SECRET fill clientId and clientSecret; for a self-managed
 * // instance pass its URL: GitLab({ issuer: 'https://gitlab.example.com' }).
 * // Create the application (User settings → Applications, or a group's or the instance's) with
 * // the scopes openid, profile and email, and the redirect URI
 * // https://<your-site>/api/auth/callback/gitlab.
 * const { handlers, auth } = Portcullis({ providers: [GitLab] })
 * ```
 * @see https://docs.gitlab.com/integration/openid_connect_provider/
 * @see https://docs.gitlab.com/integration/oauth_provider/
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/**
 * The claims GitLab shares with an OpenID Connect client (ID token and userinfo together).
 * @see https://docs.gitlab.com/integration/openid_connect_provider/#shared-information
 */
export interface GitLabProfile {
  /** The user's numeric id, as a string: stable, unlike the username. */
  sub: string
  /** The id GitLab used as `sub` before 2021 (a hash); kept for migrations. */
  sub_legacy?: string
  auth_time?: number
  /** The user's full name. */
  name: string
  /** The username. */
  nickname: string
  preferred_username: string
  /** The primary address (with the `email` scope). */
  email?: string
  /** Whether the primary address has been confirmed. */
  email_verified?: boolean
  website?: string
  /** The user's profile URL. */
  profile: string
  /** The avatar URL. */
  picture?: string
  /** Paths of the groups the user belongs to, directly or through a parent group (userinfo only). */
  groups?: string[]
  /** Paths of the groups the user belongs to directly (ID token). */
  groups_direct?: string[]
  'https://gitlab.org/claims/groups/owner'?: string[]
  'https://gitlab.org/claims/groups/maintainer'?: string[]
  'https://gitlab.org/claims/groups/developer'?: string[]
  [claim: string]: unknown
}

/** Overrides of the GitLab provider; every field optional. `issuer` selects a self-managed instance. */
export type GitLabUserConfig = OIDCUserConfig<GitLabProfile>

/**
 * The GitLab provider.
 *
 * Defaults: issuer `https://gitlab.com` (pass `issuer`, the URL of a self-managed instance, whose
 * discovery document lives at `<issuer>/.well-known/openid-configuration`; `AUTH_GITLAB_ISSUER`
 * does not replace this default, because an issuer given by the provider wins over the environment);
 * scope `openid profile email`; PKCE and nonce. The user's `name` is the full name, else the
 * username; `email` only when GitLab says it is verified.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * GitLab({ issuer: 'https://gitlab.example.com' })
 * // The API as the user as well (read the account's access_token):
 * GitLab({ authorization: { params: { scope: 'openid profile email read_api' } } })
 * ```
 * @see https://docs.gitlab.com/integration/oauth_provider/#view-all-authorized-applications
 */
export default function GitLab(options: GitLabUserConfig = {}): OIDCConfig<GitLabProfile> {
  assertOptions('GitLab', options)
  const defaults: OIDCConfig<GitLabProfile> = {
    id: 'gitlab',
    name: 'GitLab',
    type: 'oidc',
    issuer: 'https://gitlab.com',
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => standardClaimsUser(profile, {
      id: String(profile.sub),
      name: profile.name || profile.nickname || profile.preferred_username || null,
      image: profile.picture || null,
    }),
  }
  return withOverrides(defaults, options)
}

/** One line for the providers table in the docs. */
export const quirks = 'Self-managed instance: pass issuer (its URL)'

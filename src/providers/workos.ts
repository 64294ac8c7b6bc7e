/**
 * Sign in with WorkOS SSO: WorkOS brokers the sign-in to an organization's identity provider (SAML
 * or OIDC: Okta, Entra ID, Google Workspace...) or to an OAuth provider, and hands back one
 * normalized profile. OAuth 2 without ID token; the profile arrives in the token response itself.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import WorkOS from 'portcullis/providers/workos'
 *
 * // AUTH_WORKOS_ID and AUTH_WORKOS_SECRET fill clientId and clientSecret (the Client ID and an API key).
 * // In the WorkOS dashboard (Redirects), add https://<your-site>/api/auth/callback/workos.
 * const { handlers, auth, signIn } = Portcullis({ providers: [WorkOS({ organization: 'org_01EHZNVPK3SFK441A1RGBFSHRT' })] })
 * // Or choose the organization per sign-in: signIn('workos', {}, { organization: orgId })
 * ```
 * @see https://workos.com/docs/sso
 * @see https://workos.com/docs/reference/sso/get-authorization-url
 * @see https://workos.com/docs/reference/sso/profile/get-profile-and-token
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The normalized WorkOS SSO profile (the `profile` of the token response, and of `GET /sso/profile`).
 * @see https://workos.com/docs/reference/sso/profile
 */
export interface WorkOSProfile {
  object: 'profile'
  /** The WorkOS profile id (`prof_...`): stable for the user within one connection. */
  id: string
  /** The user's id at the identity provider. */
  idp_id: string
  connection_id: string
  /** e.g. `OktaSAML`, `GoogleOAuth`, `AzureSAML`. */
  connection_type: string
  organization_id: string | null
  email: string
  first_name: string | null
  last_name: string | null
  role?: { slug: string } | null
  groups?: string[]
  custom_attributes?: Record<string, unknown>
  /** Everything the identity provider sent, unnormalized. */
  raw_attributes?: Record<string, unknown>
  [key: string]: unknown
}

/** Overrides of the WorkOS provider; every field optional. One of the three routing options is needed per sign-in. */
export interface WorkOSUserConfig extends OAuthUserConfig<WorkOSProfile> {
  /** Sign in through this organization's active connection (`org_...`). */
  organization?: string
  /** Sign in through this connection (`conn_...`). */
  connection?: string
  /** Sign in through an OAuth provider WorkOS brokers: `GoogleOAuth`, `MicrosoftOAuth`, `GitHubOAuth`, `AppleOAuth`. */
  provider?: string
}

/** One line for the providers table in the docs. */
export const quirks = 'Profile in the token response; each sign-in needs organization, connection or provider; SSO only (not AuthKit); e-mail only for an organization (its verified domains)'

const API = 'https://api.workos.com'

/**
 * The WorkOS provider (SSO).
 *
 * WorkOS needs to know where to send the user: give `organization`, `connection` or `provider`
 * here, or per sign-in as an authorization param (`signIn('workos', {}, { organization })`);
 * without one WorkOS answers with an error. Defaults: no scope; PKCE; client authentication
 * `client_secret_post` (WorkOS takes `client_id` and `client_secret`, an API key, in the body).
 * The profile is the `profile` object of the token response (no further request), or, if a token
 * response lacks it, `GET /sso/profile`. `name` is first and last name; `email` is the address the
 * identity provider asserted. `emailVerified` is true only for a profile of an organization
 * (`organization_id` set): WorkOS signs such a user in only when the address's domain is one of the
 * organization's verified domains (its defence against an IdP admin creating users under any
 * address). A profile without an organization (e.g. `provider: 'GoogleOAuth'`) has no such check,
 * so its address is never taken.
 *
 * AuthKit (WorkOS User Management, `/user_management/authorize`) is not this provider: its code
 * exchange is a JSON request with the client secret in it, which needs a custom `token.request`
 * that is given the secret.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key; and the routing options.
 * @example
 * ```ts
 * WorkOS({ connection: 'conn_01E4ZCR3C56J083X43JQXF3JK5' })
 * WorkOS({ provider: 'GoogleOAuth' })
 * ```
 * @see https://workos.com/docs/reference/sso/get-authorization-url
 */
export default function WorkOS(options: WorkOSUserConfig = {}): OAuthConfig<WorkOSProfile> {
  assertOptions('WorkOS', options)
  const { organization, connection, provider, ...overrides } = options
  const routing: Record<string, string> = {}
  for (const [name, value] of Object.entries({ organization, connection, provider })) {
    if (value === undefined) continue
    if (typeof value !== 'string' || !value) throw new TypeError(`WorkOS(options): ${name} must be a non-empty string.`)
    routing[name] = value
  }
  const defaults: OAuthConfig<WorkOSProfile> = {
    id: 'workos',
    name: 'WorkOS',
    type: 'oauth',
    authorization: { url: `${API}/sso/authorize`, params: routing },
    token: `${API}/sso/token`,
    userinfo: { url: `${API}/sso/profile`, request: workosProfile },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profile: (profile) => ({
      id: profile.id,
      name: [profile.first_name, profile.last_name].filter(Boolean).join(' ') || null,
      email: profile.email || null,
      // For an organization's connection WorkOS refuses an address outside the organization's verified domains.
      emailVerified: typeof profile.organization_id === 'string' && profile.organization_id.length > 0,
      image: typeof profile.raw_attributes?.picture === 'string' && profile.raw_attributes.picture ? profile.raw_attributes.picture : null,
    }),
  }
  return withOverrides(defaults, overrides)
}

/** The token response's `profile`; `GET /sso/profile` with the access token when it is missing. */
async function workosProfile({ tokens, provider }: UserinfoContext): Promise<WorkOSProfile> {
  const inResponse = tokens.profile as WorkOSProfile | undefined
  if (inResponse && typeof inResponse === 'object' && typeof inResponse.id === 'string' && inResponse.id) return inResponse
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('WorkOS: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? `${API}/sso/profile`
  const response = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
  const body = (await response.json().catch(() => null)) as (WorkOSProfile & { message?: unknown }) | null
  if (!response.ok) {
    const detail = typeof body?.message === 'string' ? `: ${body.message.slice(0, 200)}` : ''
    throw new Error(`WorkOS: GET ${url} answered ${response.status}${detail}`)
  }
  if (!body || typeof body.id !== 'string' || !body.id) throw new Error(`WorkOS: GET ${url} answered without a profile id.`)
  return body
}

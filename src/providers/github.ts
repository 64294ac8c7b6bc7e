/**
 * Sign in with GitHub (an OAuth App or a GitHub App's user authorization; github.com or GitHub
 * Enterprise Server). GitHub is OAuth 2 only, with no ID token: the profile comes from the REST API
 * (`GET /user`), completed from `GET /user/emails` when the user keeps their address private.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import GitHub from 'portcullis/providers/github'
 *
 * // AUTH_GITHUB_ID and AUTH_GITHUB_SECRET fill clientId and clientSecret.
 * // Register https://<your-site>/api/auth/callback/github as the app's callback URL.
 * const { handlers, auth } = Portcullis({ providers: [GitHub] })
 * ```
 * @see https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
 * @see https://docs.github.com/en/rest/users/users#get-the-authenticated-user
 * @see https://docs.github.com/en/rest/users/emails#list-email-addresses-for-the-authenticated-user
 */
import type { OAuthCheck, OAuthConfig, OAuthUserConfig, TokenSet, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'OAuth 2 only; client_secret_post; the address is taken only when /user/emails says it is verified (needs the user:email scope)'

/**
 * The authenticated user as `GET /user` returns it (the fields common to the public and private
 * user responses, and the private ones, present with the `user` or `read:user` scope).
 * @see https://docs.github.com/en/rest/users/users#get-the-authenticated-user
 */
export interface GitHubProfile {
  login: string
  /** Stable numeric id; `login` can be renamed, this cannot. */
  id: number
  node_id: string
  avatar_url: string
  gravatar_id: string | null
  url: string
  html_url: string
  type: string
  site_admin: boolean
  name: string | null
  company: string | null
  blog: string | null
  location: string | null
  /**
   * The public profile address; `null` when the user keeps it private. This provider replaces it
   * with the verified address it chose from `/user/emails` (see `GitHubEmail`).
   */
  email: string | null
  /**
   * Added by this provider: whether `/user/emails` lists `email` as verified. Absent when the
   * token may not read addresses (no `user:email` scope): then nothing vouches for `email`.
   */
  email_verified?: boolean
  hireable: boolean | null
  bio: string | null
  twitter_username?: string | null
  public_repos: number
  public_gists: number
  followers: number
  following: number
  created_at: string
  updated_at: string
  private_gists?: number
  total_private_repos?: number
  owned_private_repos?: number
  disk_usage?: number
  collaborators?: number
  two_factor_authentication?: boolean
  plan?: { name: string; space: number; private_repos: number; collaborators: number }
  [key: string]: unknown
}

/**
 * One entry of `GET /user/emails` (needs the `user:email` scope).
 * @see https://docs.github.com/en/rest/users/emails#list-email-addresses-for-the-authenticated-user
 */
export interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
  visibility: 'public' | 'private' | null
}

/** Overrides of the GitHub provider; every field optional. */
export interface GitHubUserConfig extends OAuthUserConfig<GitHubProfile> {
  /**
   * A GitHub Enterprise Server instance: sign-in at `<baseUrl>/login/oauth/...`, API at
   * `<baseUrl>/api/v3`. Omit for github.com.
   */
  enterprise?: { baseUrl: string }
}

/** The REST API version this provider was written against (sent as `X-GitHub-Api-Version`). */
const API_VERSION = '2022-11-28'

/**
 * The GitHub provider.
 *
 * Defaults: scope `read:user user:email`; client authentication `client_secret_post` (GitHub
 * documents `client_id` and `client_secret` as body parameters). The addresses of `/user/emails`
 * decide the profile's `email`: the public address when it is verified there, else the primary
 * verified one, else any verified one; `emailVerified` says whether GitHub verified it. Without
 * the `user:email` scope granted, the public address comes unverified (GitHub un-verifies an
 * address that bounces, so being public proves nothing).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key. `authorization` given as a string replaces only the URL.
 * @example
 * ```ts
 * GitHub({ clientId: process.env.GH_ID, clientSecret: process.env.GH_SECRET })
 * GitHub({ enterprise: { baseUrl: 'https://github.example.com' } })
 * GitHub({ authorization: { params: { scope: 'read:user user:email read:org' } } })
 * ```
 * @see https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps
 */
export default function GitHub(options: GitHubUserConfig = {}): OAuthConfig<GitHubProfile> {
  assertOptions('GitHub', options)
  const { enterprise, ...overrides } = options
  const { site, api } = githubUrls(enterprise)
  const userinfoUrl = `${api}/user`

  const defaults: OAuthConfig<GitHubProfile> = {
    id: 'github',
    name: 'GitHub',
    type: 'oauth',
    authorization: { url: `${site}/login/oauth/authorize`, params: { scope: 'read:user user:email' } },
    token: `${site}/login/oauth/access_token`,
    userinfo: { url: userinfoUrl, request: (context) => fetchGitHubProfile(context, userinfoUrl) },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profile: (profile) => ({
      id: String(profile.id),
      name: profile.name ?? profile.login,
      email: profile.email ?? null,
      // Set by fetchGitHubProfile from /user/emails, GitHub's per-address `verified`.
      emailVerified: profile.email_verified === true,
      image: profile.avatar_url,
    }),
  }
  // GitHub Enterprise Server's docs say it does not support PKCE yet (it ignores the parameters), so
  // state is what ties the callback to the browser there.
  if (enterprise) defaults.checks = ['pkce', 'state'] satisfies OAuthCheck[]

  return withOverrides(defaults, overrides)
}

/**
 * `GET /user`, then, when the token may read addresses, `GET /user/emails` to choose a verified
 * address and say so in `email_verified`.
 */
async function fetchGitHubProfile({ tokens, provider }: UserinfoContext, defaultUrl: string): Promise<GitHubProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('GitHub: the token endpoint answered without an access_token.')
  const userUrl = provider.userinfoUrl ?? defaultUrl
  const profile = await getGitHubJson<GitHubProfile>(userUrl, accessToken)
  if (!profile || typeof profile !== 'object' || typeof profile.id !== 'number') {
    throw new Error(`GitHub: GET ${userUrl} answered without a numeric user id.`)
  }
  if (!mayReadEmails(tokens)) return { ...profile, email_verified: false }
  // Paginated (30 a page by default): ask for the maximum so the primary address is on page one.
  const emails = await getGitHubJson<GitHubEmail[]>(`${userUrl}/emails?per_page=100`, accessToken)
  return { ...profile, ...chooseGitHubEmail(profile.email, Array.isArray(emails) ? emails : []) }
}

/**
 * The address to map: the public one if verified, else the primary verified one, else any verified
 * one; with none verified, the public (else primary) address, marked unverified.
 */
function chooseGitHubEmail(publicEmail: string | null, emails: GitHubEmail[]): { email: string | null; email_verified: boolean } {
  const verified = emails.filter((entry) => entry.verified === true && typeof entry.email === 'string' && entry.email)
  const chosen =
    verified.find((entry) => publicEmail != null && entry.email.toLowerCase() === publicEmail.toLowerCase()) ??
    verified.find((entry) => entry.primary === true) ??
    verified[0]
  if (chosen) return { email: chosen.email, email_verified: true }
  const fallback = publicEmail ?? emails.find((entry) => entry.primary === true)?.email ?? null
  return { email: fallback, email_verified: false }
}

/**
 * Whether the granted scopes let the token list addresses (`user:email` or `user`). The user can
 * grant fewer scopes than asked; GitHub reports what it granted, comma-separated. Unknown: try.
 */
function mayReadEmails(tokens: TokenSet): boolean {
  if (typeof tokens.scope !== 'string') return true
  const granted = tokens.scope.split(/[\s,]+/)
  return granted.includes('user:email') || granted.includes('user')
}

async function getGitHubJson<T>(url: string, accessToken: string): Promise<T> {
  const response = await fetch(url, {
    headers: {
      Authorization: `Bearer ${accessToken}`,
      Accept: 'application/vnd.github+json',
      'X-GitHub-Api-Version': API_VERSION,
      // The REST API refuses requests without a User-Agent.
      'User-Agent': 'portcullis',
    },
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) {
    // GitHub's error bodies are `{ message, documentation_url }`; the message helps, the token is never in it.
    const body = (await response.json().catch(() => null)) as { message?: unknown } | null
    const detail = typeof body?.message === 'string' ? `: ${body.message.slice(0, 200)}` : ''
    throw new Error(`GitHub: GET ${url} answered ${response.status}${detail}`)
  }
  return (await response.json()) as T
}

function githubUrls(enterprise: GitHubUserConfig['enterprise']): { site: string; api: string } {
  if (enterprise === undefined) return { site: 'https://github.com', api: 'https://api.github.com' }
  if (typeof enterprise?.baseUrl !== 'string' || !enterprise.baseUrl) {
    throw new TypeError('GitHub(options): enterprise.baseUrl must be the URL of your GitHub Enterprise Server, e.g. "https://github.example.com".')
  }
  const site = enterprise.baseUrl.replace(/\/+$/, '')
  return { site, api: `${site}/api/v3` }
}

/**
 * Sign in with Bitbucket Cloud (an OAuth consumer of a workspace). Bitbucket is OAuth 2 only, with
 * no ID token: the profile comes from the REST API (`GET /2.0/user`), and the address from
 * `GET /2.0/user/emails`, which `/2.0/user` never includes.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Bitbucket from 'portcullis/providers/bitbucket'
 *
 * // AUTH_BITBUCKET_ID and AUTH_BITBUCKET_SECRET fill clientId and clientSecret (the consumer's Key
 * // and Secret). In the workspace settings, under OAuth consumers, set the callback URL to
 * // https://<your-site>/api/auth/callback/bitbucket and grant the Account: Email and Read permissions.
 * const { handlers, auth } = Portcullis({ providers: [Bitbucket] })
 * ```
 * @see https://developer.atlassian.com/cloud/bitbucket/oauth-2/
 * @see https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get
 * @see https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-emails-get
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The authenticated user as `GET /2.0/user` returns it (the `account` scope), plus `email`, which
 * this provider adds from `GET /2.0/user/emails`.
 * @see https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-get
 */
export interface BitbucketProfile {
  type: 'user'
  /** Bitbucket's immutable id, in braces: `{1c2d3e4f-...}`. The key of the account. */
  uuid: string
  /** The Atlassian account id, shared with other Atlassian products. */
  account_id: string
  display_name: string
  nickname: string
  /** Deprecated by Bitbucket and absent for many accounts. */
  username?: string
  account_status?: string
  created_on: string
  has_2fa_enabled?: boolean | null
  is_staff?: boolean
  location?: string | null
  links: {
    avatar: { href: string }
    html?: { href: string }
    self?: { href: string }
    [name: string]: { href: string; name?: string } | undefined
  }
  /**
   * Added by this provider from `/2.0/user/emails`: the primary address if confirmed, else another
   * confirmed one, else the unconfirmed primary one, else `null`.
   */
  email?: string | null
  /** Added by this provider: whether Bitbucket says `email` is confirmed (`is_confirmed`). */
  email_verified?: boolean
  [key: string]: unknown
}

/**
 * One entry of `GET /2.0/user/emails` (the `email` scope).
 * @see https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/#api-user-emails-get
 */
export interface BitbucketEmail {
  type: 'email'
  email: string
  is_primary: boolean
  /** Whether the user proved they receive mail there. */
  is_confirmed: boolean
  links?: Record<string, { href: string }>
}

/** A page of a Bitbucket collection. */
interface BitbucketPage<T> {
  values?: T[]
  next?: string
  pagelen?: number
  size?: number
  page?: number
}

/** Overrides of the Bitbucket provider; every field optional. */
export type BitbucketUserConfig = OAuthUserConfig<BitbucketProfile>

/** One line for the providers table. */
export const quirks = 'The address comes from a second request (/2.0/user/emails): a confirmed one (the primary first), or none'

const API = 'https://api.bitbucket.org/2.0'
/** Pages of addresses read at most while looking for a confirmed primary one (ten a page). */
const MAX_EMAIL_PAGES = 5

/**
 * The Bitbucket provider.
 *
 * Defaults: scope `account email`; client authentication `client_secret_basic` (Bitbucket's token
 * endpoint takes the consumer key and secret as HTTP Basic credentials); checks PKCE and `state`
 * (Bitbucket Cloud does not document PKCE, so `state` is what surely ties the callback to the
 * browser); `id` is the `uuid`; `email` a *confirmed* address (the primary one first), and
 * `emailVerified` true when there is one (an unconfirmed primary address comes marked unverified).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * Bitbucket({ clientId: process.env.BB_KEY, clientSecret: process.env.BB_SECRET })
 * ```
 * @see https://developer.atlassian.com/cloud/bitbucket/rest/intro/#authentication
 */
export default function Bitbucket(options: BitbucketUserConfig = {}): OAuthConfig<BitbucketProfile> {
  assertOptions('Bitbucket', options)
  const defaults: OAuthConfig<BitbucketProfile> = {
    id: 'bitbucket',
    name: 'Bitbucket',
    type: 'oauth',
    authorization: { url: 'https://bitbucket.org/site/oauth2/authorize', params: { scope: 'account email' } },
    token: 'https://bitbucket.org/site/oauth2/access_token',
    userinfo: { url: `${API}/user`, request: (context) => fetchBitbucketProfile(context) },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: profile.uuid,
      name: profile.display_name || profile.nickname || null,
      email: profile.email ?? null,
      // Set from Bitbucket's is_confirmed by fetchBitbucketProfile.
      emailVerified: profile.email_verified === true,
      image: profile.links?.avatar?.href ?? null,
    }),
  }
  return withOverrides(defaults, options)
}

/** `GET /2.0/user`, then a confirmed address from `GET /2.0/user/emails`. */
async function fetchBitbucketProfile({ tokens, provider }: UserinfoContext): Promise<BitbucketProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Bitbucket: the token endpoint answered without an access_token.')
  const userUrl = provider.userinfoUrl ?? `${API}/user`
  const profile = await getBitbucketJson<BitbucketProfile>(userUrl, accessToken)
  if (!profile || typeof profile !== 'object' || typeof profile.uuid !== 'string' || !profile.uuid) {
    throw new Error(`Bitbucket: GET ${userUrl} answered without a uuid.`)
  }
  return { ...profile, ...(await confirmedEmail(`${userUrl}/emails`, accessToken)) }
}

/**
 * The primary address if confirmed, else the first other confirmed one; with none confirmed, the
 * primary address marked unconfirmed (which the core never takes).
 */
async function confirmedEmail(url: string, accessToken: string): Promise<{ email: string | null; email_verified: boolean }> {
  let primary: string | undefined
  let otherConfirmed: string | undefined
  let next: string | undefined = url
  for (let page = 0; next && page < MAX_EMAIL_PAGES; page++) {
    const body: BitbucketPage<BitbucketEmail> = await getBitbucketJson<BitbucketPage<BitbucketEmail>>(next, accessToken)
    for (const entry of Array.isArray(body?.values) ? body.values : []) {
      if (typeof entry?.email !== 'string' || !entry.email) continue
      if (entry.is_primary === true && entry.is_confirmed === true) return { email: entry.email, email_verified: true }
      if (entry.is_primary === true) primary ??= entry.email
      else if (entry.is_confirmed === true) otherConfirmed ??= entry.email
    }
    // Only follow Bitbucket's own next links, never another host.
    next = typeof body?.next === 'string' && new URL(body.next).origin === new URL(url).origin ? body.next : undefined
  }
  if (otherConfirmed) return { email: otherConfirmed, email_verified: true }
  return { email: primary ?? null, email_verified: false }
}

async function getBitbucketJson<T>(url: string, accessToken: string): Promise<T> {
  const response = await fetch(url, {
    headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) {
    // Bitbucket's error bodies are `{ type: 'error', error: { message } }`; the token is never in them.
    const body = (await response.json().catch(() => null)) as { error?: { message?: unknown } } | null
    const detail = typeof body?.error?.message === 'string' ? `: ${body.error.message.slice(0, 200)}` : ''
    throw new Error(`Bitbucket: GET ${url} answered ${response.status}${detail}`)
  }
  return (await response.json()) as T
}

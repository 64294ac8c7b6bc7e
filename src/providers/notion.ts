/**
 * Sign in with Notion, through a public Notion integration (connection). Notion is OAuth 2 only,
 * with no ID token and no "me" endpoint for a person: the user who authorized the integration
 * comes in the token response itself (`owner.user`), which this provider reads without a further
 * request. Only when that is missing does it ask the API (`GET /v1/users/me`, the integration's
 * bot user, whose `bot.owner.user` is the same person), with the `Notion-Version` header every
 * Notion API request needs.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Notion from 'portcullis/providers/notion'
 *
 * // AUTH_NOTION_ID and AUTH_NOTION_SECRET fill clientId and clientSecret (the public integration's
 * // OAuth client ID and secret). Register https://<your-site>/api/auth/callback/notion as its
 * // redirect URI, and enable "Read user information including email addresses" for the address.
 * const { handlers, auth } = Portcullis({ providers: [Notion] })
 * ```
 * @see https://developers.notion.com/docs/authorization
 * @see https://developers.notion.com/reference/create-a-token
 * @see https://developers.notion.com/reference/user
 */
import type { OAuthConfig, OAuthUserConfig, TokenSet, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * A Notion user object of type `person`, as the token response's `owner.user` carries it.
 * @see https://developers.notion.com/reference/user
 */
export interface NotionProfile {
  object: 'user'
  /** The user's id (a UUID): stable, the key of the account. */
  id: string
  type: 'person' | 'bot'
  name?: string | null
  avatar_url?: string | null
  /** Only with the integration's "user information including email addresses" capability. */
  person?: { email?: string }
  [key: string]: unknown
}

/**
 * The token response of `POST /v1/oauth/token`: the usual fields plus the workspace and owner.
 * @see https://developers.notion.com/reference/create-a-token
 */
export interface NotionTokenSet extends TokenSet {
  bot_id?: string
  workspace_id?: string
  workspace_name?: string | null
  workspace_icon?: string | null
  owner?: { type: 'user'; user: NotionProfile } | { type: 'workspace'; workspace: true }
  duplicated_template_id?: string | null
  request_id?: string
}

/** Overrides of the Notion provider; every field optional. */
export type NotionUserConfig = OAuthUserConfig<NotionProfile>

/** One line for the providers table. */
export const quirks = 'The user comes in the token response (owner.user), no API call; owner=user; no scopes; the address is never taken (no verified flag)'

/** The Notion API version this provider was written against (the `Notion-Version` header). */
export const NOTION_API_VERSION = '2022-06-28'

const API = 'https://api.notion.com/v1'

/**
 * The Notion provider.
 *
 * Defaults: `owner=user` (Notion's only owner for public integrations) and no scope (Notion has
 * none: capabilities are set on the integration); client authentication `client_secret_basic`, as
 * Notion requires; checks PKCE and `state` (Notion does not document PKCE). `email` is the
 * person's address when the integration may read it, else `null`; Notion says nothing of its
 * verification, so `emailVerified` is false and the address is never taken.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @see https://developers.notion.com/docs/authorization#public-integration-auth-flow-set-up
 */
export default function Notion(options: NotionUserConfig = {}): OAuthConfig<NotionProfile> {
  assertOptions('Notion', options)
  const defaults: OAuthConfig<NotionProfile> = {
    id: 'notion',
    name: 'Notion',
    type: 'oauth',
    authorization: { url: `${API}/oauth/authorize`, params: { owner: 'user' } },
    token: `${API}/oauth/token`,
    userinfo: { url: `${API}/users/me`, request: (context) => notionOwner(context) },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: profile.id,
      name: profile.name || null,
      email: profile.person?.email || null,
      // Notion's user object gives person.email with no verification status.
      emailVerified: false,
      image: profile.avatar_url || null,
    }),
  }
  return withOverrides(defaults, options)
}

/** The person in the token response, else the owner of the integration's bot user. */
async function notionOwner({ tokens, provider }: UserinfoContext): Promise<NotionProfile> {
  const owner = (tokens as NotionTokenSet).owner
  if (owner?.type === 'user' && isPerson(owner.user)) return owner.user
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Notion: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? `${API}/users/me`
  const response = await fetch(url, {
    headers: { Authorization: `Bearer ${accessToken}`, 'Notion-Version': NOTION_API_VERSION, Accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) {
    // Notion's errors are `{ object: 'error', status, code, message }`; the token is never in them.
    const body = (await response.json().catch(() => null)) as { code?: unknown; message?: unknown } | null
    const detail = typeof body?.message === 'string' ? `: ${String(body.code)} ${body.message.slice(0, 200)}` : ''
    throw new Error(`Notion: GET ${url} answered ${response.status}${detail}`)
  }
  const bot = (await response.json()) as { bot?: { owner?: { type?: string; user?: unknown } } }
  const user = bot?.bot?.owner?.user
  if (isPerson(user)) return user
  throw new Error('Notion: the authorization is owned by a workspace, not a user, so there is no person to sign in; use a public integration (owner=user).')
}

function isPerson(user: unknown): user is NotionProfile {
  return !!user && typeof user === 'object' && typeof (user as NotionProfile).id === 'string' && (user as NotionProfile).id.length > 0
}

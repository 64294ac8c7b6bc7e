/**
 * Sign in with Dropbox (OAuth 2 code flow with PKCE, scoped apps). No ID token: the profile is the
 * API's `users/get_current_account`, an RPC endpoint called with POST.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Dropbox from 'portcullis/providers/dropbox'
 *
 * // AUTH_DROPBOX_ID and AUTH_DROPBOX_SECRET fill clientId and clientSecret (the App key and App secret).
 * // In the App Console (your app → Settings → OAuth 2 → Redirect URIs), add
 * // https://<your-site>/api/auth/callback/dropbox; under Permissions, account_info.read is enough.
 * const { handlers, auth } = Portcullis({ providers: [Dropbox] })
 * ```
 * @see https://developers.dropbox.com/oauth-guide
 * @see https://www.dropbox.com/developers/documentation/http/documentation#oauth2-authorize
 * @see https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account
 */
import type { OAuthConfig, OAuthUserConfig, Profile, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The `FullAccount` that `users/get_current_account` returns (the fields this provider reads, and
 * common others).
 * @see https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account
 */
export interface DropboxProfile {
  /** The account id (`dbid:...`): stable. */
  account_id: string
  name: { given_name: string; surname: string; familiar_name: string; display_name: string; abbreviated_name: string }
  email: string
  /** Whether the user has verified the address. */
  email_verified: boolean
  disabled: boolean
  locale: string
  referral_link: string
  is_paired: boolean
  account_type: { '.tag': 'basic' | 'pro' | 'business' | string }
  root_info: { '.tag': string; root_namespace_id: string; home_namespace_id: string; [key: string]: unknown }
  /** Absent when the user has no photo. */
  profile_photo_url?: string
  country?: string
  team?: { id: string; name: string; [key: string]: unknown }
  team_member_id?: string
  [key: string]: unknown
}

/**
 * Overrides of the Dropbox provider; every field optional. A `profile` of yours receives the
 * account typed as the generic `Profile` (cast it to `DropboxProfile`): `name` is an object here,
 * and `Profile` types it as the OIDC claim, a string.
 */
export type DropboxUserConfig = OAuthUserConfig

/** One line for the providers table in the docs. */
export const quirks = 'Account info is a POST (RPC endpoint); token_access_type=offline for a refresh token'

const GET_CURRENT_ACCOUNT = 'https://api.dropboxapi.com/2/users/get_current_account'

/**
 * The Dropbox provider.
 *
 * Defaults: scope `account_info.read`; `token_access_type=offline`, so the token response carries
 * a refresh token (Dropbox's short-lived access tokens last four hours); PKCE; client
 * authentication `client_secret_basic`. The profile is `POST /2/users/get_current_account` (no
 * body). The user's `name` is the display name; `email` only when Dropbox says it is verified.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Files too (the scopes must also be enabled under Permissions in the App Console):
 * Dropbox({ authorization: { params: { scope: 'account_info.read files.metadata.read files.content.read' } } })
 * // No refresh token:
 * Dropbox({ authorization: { params: { token_access_type: 'online' } } })
 * ```
 * @see https://developers.dropbox.com/oauth-guide#using-refresh-tokens
 */
export default function Dropbox(options: DropboxUserConfig = {}): OAuthConfig {
  assertOptions('Dropbox', options)
  const defaults: OAuthConfig = {
    id: 'dropbox',
    name: 'Dropbox',
    type: 'oauth',
    authorization: { url: 'https://www.dropbox.com/oauth2/authorize', params: { scope: 'account_info.read', token_access_type: 'offline' } },
    token: 'https://api.dropboxapi.com/oauth2/token',
    userinfo: { url: GET_CURRENT_ACCOUNT, request: fetchDropboxAccount },
    profile: (answer) => {
      const profile = answer as unknown as DropboxProfile
      return {
        id: profile.account_id,
        name: profile.name?.display_name || null,
        email: profile.email || null,
        emailVerified: profile.email_verified === true,
        image: profile.profile_photo_url || null,
      }
    },
  }
  return withOverrides(defaults, options)
}

/**
 * `POST /2/users/get_current_account`. An RPC endpoint without arguments: no body and no
 * Content-Type (a JSON Content-Type would need the body `null`).
 */
async function fetchDropboxAccount({ tokens, provider }: UserinfoContext): Promise<Profile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Dropbox: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? GET_CURRENT_ACCOUNT
  const response = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${accessToken}` }, signal: AbortSignal.timeout(10_000) })
  if (!response.ok) {
    // Dropbox's errors are `{ error_summary, error }` as JSON, or plain text for a malformed call; never the token.
    const text = await response.text().catch(() => '')
    let detail = text
    try {
      const summary = (JSON.parse(text) as { error_summary?: unknown }).error_summary
      if (typeof summary === 'string') detail = summary
    } catch {
      // Plain text: kept as is.
    }
    throw new Error(`Dropbox: POST ${url} answered ${response.status}${detail ? `: ${detail.slice(0, 200)}` : ''}`)
  }
  const account = (await response.json().catch(() => null)) as DropboxProfile | null
  if (!account || typeof account !== 'object' || typeof account.account_id !== 'string' || !account.account_id) {
    throw new Error(`Dropbox: POST ${url} answered without an account_id.`)
  }
  return account as unknown as Profile
}

/**
 * Sign in with VK ID (id.vk.com), VK's current authorization service, OAuth 2.1 with PKCE.
 *
 * Why VK ID and not the legacy `oauth.vk.com`: VK documents VK ID as the way to add "Sign in with
 * VK" to a site today (apps are created in its business console, id.vk.com), and the legacy
 * OAuth 2.0 endpoints are kept only for existing apps. VK ID also requires PKCE and `state`, where
 * the legacy flow had neither.
 *
 * Two quirks: the callback carries a `device_id` that the token exchange must repeat (so this
 * provider exchanges the code itself), and the exchange needs no client secret (PKCE proves the
 * client), so VK ID is configured as a public client: only `AUTH_VK_ID` is needed.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import VK from 'portcullis/providers/vk'
 *
 * // AUTH_VK_ID fills clientId (the app ID). In the VK ID console (https://id.vk.com/about/business/go)
 * // create a Web app, add your domain and the trusted redirect URL
 * // https://<your-site>/api/auth/callback/vk, and request access to e-mail.
 * const { handlers, auth } = Portcullis({ providers: [VK] })
 * ```
 * @see https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/connection/api-integration/api-description
 * @see https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/connection/start-integration/auth-without-sdk-web
 */
import type { OAuthConfig, OAuthUserConfig, TokenRequestContext, TokenSet, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The `user` object of `POST https://id.vk.com/oauth2/user_info`; which fields are present depends
 * on the granted scopes (`vkid.personal_info`, `email`, `phone`).
 * @see https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/connection/api-integration/api-description
 */
export interface VKProfile {
  /** The VK user id (digits, as a string): stable, the key of the account. */
  user_id: string
  first_name?: string
  last_name?: string
  /** A URL of the profile picture. */
  avatar?: string
  /** With the `email` scope. */
  email?: string
  /** With the `phone` scope. */
  phone?: string
  /** 1 female, 2 male, 0 unknown. */
  sex?: 0 | 1 | 2
  /** Whether VK has verified the person's identity. */
  verified?: boolean
  /** `DD.MM.YYYY`. */
  birthday?: string
  [key: string]: unknown
}

/** The answer of `POST https://id.vk.com/oauth2/auth` (the code exchange). */
export interface VKTokenSet extends TokenSet {
  /** The VK user id. */
  user_id?: number
  state?: string
}

/** Overrides of the VK provider; every field optional. */
export type VKUserConfig = OAuthUserConfig<VKProfile>

/** One line for the providers table. */
export const quirks = 'VK ID (OAuth 2.1): public client with PKCE, no secret; the token exchange repeats the callback device_id; the address is never taken (no verified flag)'

const BASE = 'https://id.vk.com'

/**
 * The VK ID provider.
 *
 * Defaults: scope `vkid.personal_info email`; a public client (`token_endpoint_auth_method:
 * 'none'`); checks PKCE and `state`, both required by VK ID. The code exchange is a custom
 * `token.request` that adds the callback's `device_id`; the profile comes from
 * `POST /oauth2/user_info`. `email` is the address VK gives with the `email` scope, else `null`;
 * VK ID gives no verification status for it, so `emailVerified` is false and it is never taken.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * VK({ authorization: { params: { scope: 'vkid.personal_info email phone', lang_id: '3' } } })
 * ```
 * @see https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/connection/api-integration/api-description
 */
export default function VK(options: VKUserConfig = {}): OAuthConfig<VKProfile> {
  assertOptions('VK', options)
  const defaults: OAuthConfig<VKProfile> = {
    id: 'vk',
    name: 'VK',
    type: 'oauth',
    authorization: { url: `${BASE}/authorize`, params: { scope: 'vkid.personal_info email' } },
    token: { url: `${BASE}/oauth2/auth`, request: (context) => exchangeVKCode(context) },
    userinfo: { url: `${BASE}/oauth2/user_info`, request: (context) => fetchVKUser(context) },
    client: { token_endpoint_auth_method: 'none' },
    checks: ['pkce', 'state'],
    profile: (profile) => ({
      id: String(profile.user_id),
      name: [profile.first_name, profile.last_name].filter(Boolean).join(' ') || null,
      email: profile.email || null,
      // VK ID's user_info has no flag for the address (`verified` is about the person's identity).
      emailVerified: false,
      image: profile.avatar || null,
    }),
  }
  return withOverrides(defaults, options)
}

/** `POST /oauth2/auth` with the code, the PKCE verifier and the callback's `device_id`. */
async function exchangeVKCode({ code, redirectUri, codeVerifier, params, provider }: TokenRequestContext): Promise<VKTokenSet> {
  const deviceId = params.get('device_id')
  if (!deviceId) throw new Error('VK: the callback has no device_id parameter, which the VK ID token exchange requires.')
  if (!codeVerifier) throw new Error('VK: VK ID requires PKCE; keep "pkce" in checks.')
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: codeVerifier,
    redirect_uri: redirectUri,
    client_id: provider.clientId,
    device_id: deviceId,
  })
  const state = params.get('state')
  if (state) body.set('state', state)
  const tokens = await postVK<VKTokenSet>(provider.tokenUrl ?? `${BASE}/oauth2/auth`, body)
  // VK ID echoes the state; a different one means the answer is for another request.
  if (state && typeof tokens.state === 'string' && tokens.state !== state) throw new Error('VK: the token response is for another state.')
  return tokens
}

/** `POST /oauth2/user_info` with the access token in the body, as VK ID documents. */
async function fetchVKUser({ tokens, provider }: UserinfoContext): Promise<VKProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('VK: the token endpoint answered without an access_token.')
  const url = provider.userinfoUrl ?? `${BASE}/oauth2/user_info`
  const answer = await postVK<{ user?: VKProfile }>(url, new URLSearchParams({ client_id: provider.clientId, access_token: accessToken }))
  const user = answer.user
  if (!user || typeof user !== 'object' || (typeof user.user_id !== 'string' && typeof user.user_id !== 'number') || user.user_id === '') {
    throw new Error(`VK: POST ${url} answered without a user id.`)
  }
  return user
}

/** A form POST to VK ID; VK ID reports errors as `{ error, error_description }`, sometimes with HTTP 200. */
async function postVK<T>(url: string, body: URLSearchParams): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body,
    signal: AbortSignal.timeout(10_000),
  })
  const json = (await response.json().catch(() => null)) as (T & { error?: unknown; error_description?: unknown }) | null
  if (!response.ok || !json || typeof json !== 'object' || json.error !== undefined) {
    const error = typeof json?.error === 'string' ? ` error=${json.error.slice(0, 64)}` : ''
    const description = typeof json?.error_description === 'string' ? ` (${json.error_description.slice(0, 200)})` : ''
    throw new Error(`VK: POST ${url} answered ${response.status}${error}${description}`)
  }
  return json
}

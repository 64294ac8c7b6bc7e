/**
 * Sign in with Yandex ID. Yandex is OAuth 2 only for web sign-in (no ID token): the profile comes
 * from `GET https://login.yandex.ru/info?format=json`, called with the `Authorization: OAuth
 * <token>` scheme Yandex documents. The picture is not a URL but an id (`default_avatar_id`) that
 * this provider turns into one.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Yandex from 'portcullis/providers/yandex'
 *
 * // AUTH_YANDEX_ID and AUTH_YANDEX_SECRET fill clientId and clientSecret. At
 * // https://oauth.yandex.com/client/new choose "Web services", add the Yandex ID permissions
 * // login:info, login:email and login:avatar, and set the Redirect URI to
 * // https://<your-site>/api/auth/callback/yandex.
 * const { handlers, auth } = Portcullis({ providers: [Yandex] })
 * ```
 * @see https://yandex.com/dev/id/doc/en/codes/code-url
 * @see https://yandex.com/dev/id/doc/en/user-information
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The user as `GET https://login.yandex.ru/info?format=json` returns it; which fields are present
 * depends on the permissions granted (`login:info`, `login:email`, `login:avatar`, ...).
 * @see https://yandex.com/dev/id/doc/en/user-information#response-format
 */
export interface YandexProfile {
  /** The user's Yandex id (digits, as a string): stable, the key of the account. */
  id: string
  login: string
  /** The app the token was issued to. */
  client_id: string
  /** The id for this app (`psuid`): differs between apps for the same user. */
  psuid: string
  /** `login:info`. */
  display_name?: string
  real_name?: string
  first_name?: string
  last_name?: string
  sex?: 'male' | 'female' | null
  /** `login:email`: the address Yandex uses to contact the user, and all of them. */
  default_email?: string
  emails?: string[]
  /** `login:avatar`: build the URL `https://avatars.yandex.net/get-yapic/<id>/<size>`. */
  default_avatar_id?: string
  /** `true` when the user has no picture (the id then points at a placeholder). */
  is_avatar_empty?: boolean
  /** `login:birthday`: `YYYY-MM-DD`, unknown parts as zeros. */
  birthday?: string | null
  /** `login:default_phone`. */
  default_phone?: { id: number; number: string }
  [key: string]: unknown
}

/** The picture sizes Yandex serves (`islands-200` is 200×200). */
export type YandexAvatarSize =
  | 'islands-small'
  | 'islands-34'
  | 'islands-middle'
  | 'islands-50'
  | 'islands-retina-small'
  | 'islands-68'
  | 'islands-75'
  | 'islands-retina-middle'
  | 'islands-retina-50'
  | 'islands-200'

/** Overrides of the Yandex provider; every field optional. */
export interface YandexUserConfig extends OAuthUserConfig<YandexProfile> {
  /** The size of the picture URL in `image`. Default `islands-200` (200×200). */
  avatarSize?: YandexAvatarSize
}

/** One line for the providers table. */
export const quirks = 'Userinfo with the "Authorization: OAuth" scheme; picture URL built from default_avatar_id; the address is never taken (Yandex does not say it is verified)'

const INFO_URL = 'https://login.yandex.ru/info'

/**
 * The Yandex provider.
 *
 * Defaults: scope `login:info login:email login:avatar` (each must also be enabled on the app);
 * client authentication `client_secret_basic`; PKCE (Yandex supports it). `email` is
 * `default_email`, else the first of `emails`, with `emailVerified: false`: Yandex ID documents
 * neither as verified and gives no flag per address, so the address is never taken (a `profile` of
 * yours may vouch for it, e.g. for an address at the account's own Yandex mailbox). `image` is
 * `null` when the user has no picture.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key; and `avatarSize`.
 * @example
 * ```ts
 * Yandex({ avatarSize: 'islands-retina-50', authorization: { params: { force_confirm: 'yes' } } })
 * ```
 * @see https://yandex.com/dev/id/doc/en/codes/code-url#code-url__parameters
 */
export default function Yandex(options: YandexUserConfig = {}): OAuthConfig<YandexProfile> {
  assertOptions('Yandex', options)
  const { avatarSize = 'islands-200', ...overrides } = options
  if (typeof avatarSize !== 'string' || !/^islands-[\w-]+$/.test(avatarSize)) {
    throw new TypeError(`Yandex(options): avatarSize must be one of Yandex's sizes, e.g. "islands-200"; got ${JSON.stringify(avatarSize)}.`)
  }
  const defaults: OAuthConfig<YandexProfile> = {
    id: 'yandex',
    name: 'Yandex',
    type: 'oauth',
    authorization: { url: 'https://oauth.yandex.com/authorize', params: { scope: 'login:info login:email login:avatar' } },
    token: 'https://oauth.yandex.com/token',
    userinfo: { url: INFO_URL, request: (context) => fetchYandexProfile(context) },
    profile: (profile) => ({
      id: String(profile.id),
      name: profile.display_name || profile.real_name || profile.login || null,
      email: profile.default_email || profile.emails?.[0] || null,
      // Yandex ID's default_email and emails come with no verification status.
      emailVerified: false,
      image:
        profile.is_avatar_empty !== true && typeof profile.default_avatar_id === 'string' && profile.default_avatar_id
          ? `https://avatars.yandex.net/get-yapic/${encodeURIComponent(profile.default_avatar_id).replace(/%2F/gi, '/')}/${avatarSize}`
          : null,
    }),
  }
  return withOverrides(defaults, overrides)
}

async function fetchYandexProfile({ tokens, provider }: UserinfoContext): Promise<YandexProfile> {
  const accessToken = tokens.access_token
  if (typeof accessToken !== 'string' || !accessToken) throw new Error('Yandex: the token endpoint answered without an access_token.')
  const url = new URL(provider.userinfoUrl ?? INFO_URL)
  url.searchParams.set('format', 'json')
  const response = await fetch(url, {
    // The scheme Yandex documents for this endpoint is "OAuth", not "Bearer".
    headers: { Authorization: `OAuth ${accessToken}`, Accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok) throw new Error(`Yandex: GET ${url.origin}${url.pathname} answered ${response.status}${response.status === 401 ? ' (token refused)' : ''}`)
  const profile = (await response.json()) as YandexProfile
  if (!profile || typeof profile !== 'object' || (typeof profile.id !== 'string' && typeof profile.id !== 'number') || profile.id === '') {
    throw new Error(`Yandex: GET ${url.origin}${url.pathname} answered without a user id.`)
  }
  return profile
}

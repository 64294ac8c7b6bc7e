/**
 * Sign in with Facebook (Facebook Login, the manually built web flow). Facebook is OAuth 2 here,
 * with no ID token: the profile is the Graph API's `GET /me` with the fields asked for, on a
 * versioned Graph API URL.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Facebook from 'portcullis/providers/facebook'
 *
 * // AUTH_FACEBOOK_ID and AUTH_FACEBOOK_SECRET fill clientId and clientSecret (the App ID and App Secret).
 * // In the App Dashboard (Facebook Login → Settings → Valid OAuth Redirect URIs), add
 * // https://<your-site>/api/auth/callback/facebook.
 * const { handlers, auth } = Portcullis({ providers: [Facebook] })
 * ```
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/graph-api/reference/user
 * @see https://developers.facebook.com/docs/graph-api/guides/versioning
 */
import type { OAuthConfig, OAuthUserConfig, Profile } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The user as `GET /me?fields=id,name,email,picture...` returns it: only the fields asked for.
 * @see https://developers.facebook.com/docs/graph-api/reference/user
 * @see https://developers.facebook.com/docs/graph-api/reference/user/picture
 */
export interface FacebookProfile {
  /** The app-scoped user id: stable for your app, different in other apps. */
  id: string
  name?: string
  first_name?: string
  last_name?: string
  /**
   * The primary address, with the `email` permission; absent when the user has none that is
   * valid or declined the permission.
   */
  email?: string
  picture?: { data: { url: string; width?: number; height?: number; is_silhouette?: boolean } }
  [key: string]: unknown
}

/**
 * Overrides of the Facebook provider; every field optional. A `profile` of yours receives the
 * `/me` answer typed as the generic `Profile` (cast it to `FacebookProfile`): `picture` is an object
 * here, and `Profile` types it as the OIDC claim, a URL string.
 */
export interface FacebookUserConfig extends OAuthUserConfig {
  /**
   * The Graph API version of the dialog, token and `/me` URLs, e.g. `'v24.0'`. Default: the
   * version this provider was written against (`FACEBOOK_GRAPH_VERSION`). Each version is
   * available for about two years; calls to an expired one are served by the oldest available.
   * @see https://developers.facebook.com/docs/graph-api/changelog
   */
  apiVersion?: string
}

/** The Graph API version used by default. */
export const FACEBOOK_GRAPH_VERSION = 'v24.0'

/** The `/me` fields asked for: the id, the name, the address and a large picture. */
const FIELDS = 'id,name,email,picture.type(large)'

/** One line for the providers table in the docs. */
export const quirks = 'Versioned Graph API URLs (apiVersion option); client_secret_post; the address is never taken (no verified flag)'

/**
 * The Facebook provider.
 *
 * Defaults: scope `email public_profile`; PKCE; client authentication `client_secret_post`
 * (Facebook documents `client_id` and `client_secret` as parameters of the token request); the
 * profile from `GET /me?fields=id,name,email,picture.type(large)`. `email` is the address Facebook
 * returns, or `null`, with `emailVerified: false`: Facebook gives no verified flag and documents
 * the field only as the primary address (a valid one, not a confirmed one), so the address is never
 * taken. If your app requires "App Secret Proof" for API calls, turn that off for `/me`, or
 * replace `userinfo` with a `request` that adds `appsecret_proof`.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key; and `apiVersion`.
 * @example
 * ```ts
 * Facebook({ apiVersion: 'v23.0' })
 * Facebook({ userinfo: { url: 'https://graph.facebook.com/v24.0/me', params: { fields: 'id,name,email,picture,link' } } })
 * ```
 * @see https://developers.facebook.com/docs/permissions
 */
export default function Facebook(options: FacebookUserConfig = {}): OAuthConfig {
  assertOptions('Facebook', options)
  const { apiVersion = FACEBOOK_GRAPH_VERSION, ...overrides } = options
  if (typeof apiVersion !== 'string' || !/^v\d+\.\d+$/.test(apiVersion)) {
    throw new TypeError(`Facebook(options): apiVersion must look like "v24.0"; got ${JSON.stringify(apiVersion)}.`)
  }
  const defaults: OAuthConfig = {
    id: 'facebook',
    name: 'Facebook',
    type: 'oauth',
    authorization: { url: `https://www.facebook.com/${apiVersion}/dialog/oauth`, params: { scope: 'email public_profile' } },
    token: `https://graph.facebook.com/${apiVersion}/oauth/access_token`,
    userinfo: { url: `https://graph.facebook.com/${apiVersion}/me`, params: { fields: FIELDS } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    profile: (answer) => {
      const profile = answer as unknown as FacebookProfile
      return {
        id: String(profile.id),
        name: profile.name || null,
        email: profile.email || null,
        // The Graph API's User.email carries no verified flag and Facebook does not say it is confirmed.
        emailVerified: false,
        image: profile.picture?.data?.url || null,
      }
    },
  }
  return withOverrides(defaults, overrides)
}

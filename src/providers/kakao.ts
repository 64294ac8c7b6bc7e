/**
 * Sign in with Kakao, as an OpenID Connect provider: the endpoints and keys are discovered from
 * `https://kauth.kakao.com`, the ID token (RS256) is validated, and the profile is its claims
 * completed from Kakao's OIDC userinfo endpoint (`https://kapi.kakao.com/v1/oidc/userinfo`).
 *
 * Why OIDC and not the plain OAuth `GET /v2/user/me`: the ID token is signed and bound to the
 * sign-in by its nonce, the claims are standard (`sub`, `nickname`, `picture`, `email`,
 * `email_verified`), and the endpoints come from Kakao's discovery document. The cost is one
 * switch in the Kakao console: Kakao Login > OpenID Connect must be turned on, or Kakao issues no
 * ID token and the sign-in fails.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Kakao from 'portcullis/providers/kakao'
 *
 * // AUTH_KAKAO_ID and AUTH_KAKAO_SECRET fill clientId and clientSecret (the app's REST API key and
 * // its Kakao Login client secret). In the Kakao Developers console, enable Kakao Login and its
 * // OpenID Connect, register https://<your-site>/api/auth/callback/kakao as a Redirect URI, and set
 * // the consent items (nickname, profile image, and e-mail, which needs a Biz app).
 * const { handlers, auth } = Portcullis({ providers: [Kakao] })
 * ```
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/common#oidc
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#request-code
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#oidc-user-info
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/**
 * The claims of a Kakao ID token completed by the OIDC userinfo response; which are present depends
 * on the consent items the user agreed to.
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/rest-api#oidc-user-info
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/common#oidc-id-token
 */
export interface KakaoProfile {
  /** `https://kauth.kakao.com`. */
  iss?: string
  /** The app's REST API key. */
  aud?: string
  /** The Kakao user id (digits, as a string): stable, the key of the account. */
  sub: string
  auth_time?: number
  /** Consent item `profile_nickname`. */
  nickname?: string
  /** Consent item `profile_image`. */
  picture?: string
  /** Consent item `account_email`. */
  email?: string
  /** Whether Kakao verified the address (userinfo). */
  email_verified?: boolean
  name?: string
  gender?: string
  birthdate?: string
  phone_number?: string
  phone_number_verified?: boolean
  [claim: string]: unknown
}

/** Overrides of the Kakao provider; every field optional. */
export type KakaoUserConfig = OIDCUserConfig<KakaoProfile>

/** One line for the providers table. */
export const quirks = 'Turn on OpenID Connect in the Kakao console; comma-separated consent-item scopes; account_email needs a Biz app; e-mail only when email_verified (userinfo)'

/**
 * The Kakao provider.
 *
 * Defaults: issuer `https://kauth.kakao.com`; scope `openid,profile_nickname,profile_image,account_email`
 * (Kakao's consent items, comma-separated as Kakao documents; drop `account_email` for an app that
 * is not a Biz app, or Kakao refuses the request); client authentication `client_secret_post`
 * (the only method Kakao's discovery lists); PKCE and nonce. The address is taken only when the
 * userinfo answer's `email_verified` is true (the ID token alone carries no such claim).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @example
 * ```ts
 * // Without the address (an app that is not a Biz app):
 * Kakao({ authorization: { params: { scope: 'openid,profile_nickname,profile_image' } } })
 * ```
 * @see https://developers.kakao.com/docs/latest/en/kakaologin/utilize#scope-user
 */
export default function Kakao(options: KakaoUserConfig = {}): OIDCConfig<KakaoProfile> {
  assertOptions('Kakao', options)
  const defaults: OIDCConfig<KakaoProfile> = {
    id: 'kakao',
    name: 'Kakao',
    type: 'oidc',
    issuer: 'https://kauth.kakao.com',
    authorization: { params: { scope: 'openid,profile_nickname,profile_image,account_email' } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    // Kakao's OIDC userinfo (the default) carries email_verified; the ID token alone does not, and absent is not a yes.
    profile: (profile) => standardClaimsUser(profile, {
      name: profile.nickname || profile.name || null,
      email: profile.email || null,
      image: profile.picture || null,
    }),
  }
  return withOverrides(defaults, options)
}

/**
 * Generic OpenID Connect providers (`type: 'oidc'`): give the `issuer`, and the endpoints and keys
 * are discovered from its `/.well-known/openid-configuration` (once, on the first sign-in). The ID
 * token is validated (signature, `iss`, `aud`, `exp`, `nonce`) and the profile is its claims,
 * completed from the userinfo endpoint.
 *
 * @example
 * ```ts
 * import OIDC from 'portcullis/providers/oidc'
 *
 * // AUTH_CORP_ID, AUTH_CORP_SECRET and AUTH_CORP_ISSUER fill clientId, clientSecret and issuer.
 * OIDC({ id: 'corp', name: 'Corp SSO' })
 * ```
 * @see https://openid.net/specs/openid-connect-core-1_0.html
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html
 */
import type { OAuthProviderOptions, Profile, UserinfoConfig } from './oauth.js'

export type { Profile, TokenSet } from './oauth.js'

/** An OpenID Connect provider (spec §1.2 type `oidc`). */
export interface OIDCConfig<P extends Profile = Profile> extends Omit<OAuthProviderOptions<P>, 'userinfo'> {
  type: 'oidc'
  /**
   * Default: the discovered userinfo endpoint, whose claims complete the ID token's. `false` takes
   * the profile from the ID token alone (one request fewer, for providers that put every claim there).
   */
  userinfo?: UserinfoConfig | false | undefined
}

/** Overrides of a built-in OIDC provider: every field optional (`userinfo: false` included). */
export type OIDCUserConfig<P extends Profile = Profile> = Partial<Omit<OIDCConfig<P>, 'type'>>

/**
 * A generic OpenID Connect provider. A plain object with `type: 'oidc'` works the same.
 *
 * @param options `id`, `name`, and the `issuer` (or `AUTH_<ID>_ISSUER`), client id and secret.
 */
export default function OIDC<P extends Profile = Profile>(options: Omit<OIDCConfig<P>, 'type'>): OIDCConfig<P> {
  return { ...options, type: 'oidc' }
}

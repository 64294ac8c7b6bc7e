/**
 * Sign in with Google, an OpenID Connect provider: the endpoints and keys are discovered from
 * `https://accounts.google.com`, the ID token is validated, and the profile is its claims.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Google from 'portcullis/providers/google'
 *
 * // AUTH_GOOGLE_ID and AUTH_GOOGLE_SECRET fill clientId and clientSecret.
 * // In the Google Cloud console, add https://<your-site>/api/auth/callback/google to the
 * // OAuth client's "Authorized redirect URIs".
 * const { handlers, auth } = Portcullis({ providers: [Google] })
 * ```
 * @see https://developers.google.com/identity/openid-connect/openid-connect
 * @see https://developers.google.com/identity/openid-connect/reference
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'A refresh token only with access_type=offline (and prompt=consent after the first consent); e-mail only when email_verified'

/**
 * The claims of a Google ID token (and of its userinfo answer).
 * @see https://developers.google.com/identity/openid-connect/openid-connect#an-id-tokens-payload
 */
export interface GoogleProfile {
  /** `https://accounts.google.com` (older tokens: `accounts.google.com`). */
  iss: string
  /** The client that asked for the token, when it differs from `aud`. */
  azp?: string
  /** Your client id. */
  aud: string
  /** The user's stable, unique Google id: use this, never the address, as the key. */
  sub: string
  /** Only with the `email` scope. Not unique over time; not a key. */
  email?: string
  email_verified?: boolean
  /** Hash of the access token issued with this ID token. */
  at_hash?: string
  /** With the `profile` scope; Google says it is never guaranteed to be present. */
  name?: string
  picture?: string
  given_name?: string
  family_name?: string
  locale?: string
  /** The Google Workspace domain of the account; absent for consumer accounts. */
  hd?: string
  nonce?: string
  iat: number
  exp: number
  [claim: string]: unknown
}

/** Overrides of the Google provider; every field optional (`userinfo: false` included). */
export type GoogleUserConfig = OIDCUserConfig<GoogleProfile>

/**
 * The Google provider.
 *
 * The profile is the ID token's claims completed from Google's userinfo endpoint (the default for
 * `oidc`). Not `userinfo: false`: Google documents `name` and `picture` in the ID token as "might be
 * provided" with the `profile` scope and "never guaranteed to be present", and the userinfo
 * endpoint is where they reliably are; the extra request per sign-in buys a complete profile.
 *
 * A refresh token is only issued for offline access, and only on the user's first consent unless
 * the consent screen is shown again:
 * `Google({ authorization: { params: { access_type: 'offline', prompt: 'consent' } } })`.
 *
 * The address is taken only when `email_verified` is true.
 *
 * To admit one Google Workspace domain, `hd` in the authorization params only tailors Google's
 * page; check the `hd` claim yourself (e.g. in the `signIn` callback).
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key (so the offline-access params keep the scope).
 * @see https://developers.google.com/identity/openid-connect/openid-connect#authenticationuriparameters
 * @see https://developers.google.com/identity/protocols/oauth2/web-server#offline
 */
export default function Google(options: GoogleUserConfig = {}): OIDCConfig<GoogleProfile> {
  assertOptions('Google', options)
  const defaults: OIDCConfig<GoogleProfile> = {
    id: 'google',
    name: 'Google',
    type: 'oidc',
    issuer: 'https://accounts.google.com',
    authorization: { params: { scope: 'openid profile email' } },
    // The name alone (no username fallback); the address counts only with Google's email_verified
    // claim: a Workspace or consumer address without it proves nothing.
    profile: (profile) => standardClaimsUser(profile, { name: profile.name ?? null }),
  }
  return withOverrides(defaults, options)
}

/**
 * Sign in with LINE (LINE Login v2.1). LINE issues OpenID Connect ID tokens, but for web sign-in
 * it signs them with HS256 and the channel secret, while its discovery document
 * (`https://access.line.me/.well-known/openid-configuration`) lists only ES256 (the algorithm of
 * tokens obtained through the LINE SDKs and LIFF).
 *
 * Portcullis verifies every ID token signature against the provider's JWKS, and a JWKS holds no
 * HMAC key, so an `oidc` LINE provider would refuse every web ID token. This provider is therefore
 * `oauth` with LINE's issuer and explicit endpoints: openid-client checks the ID token from LINE's
 * token endpoint (issuer, audience = channel ID, expiry, nonce, algorithm HS256), and the profile
 * comes from LINE's own verify endpoint (`POST /oauth2/v2.1/verify`), which checks the HS256
 * signature with the channel secret and returns the claims, address included (LINE's userinfo
 * endpoint has no address).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Line from 'portcullis/providers/line'
 *
 * // AUTH_LINE_ID and AUTH_LINE_SECRET fill clientId and clientSecret (the LINE Login channel's
 * // Channel ID and Channel secret). In the LINE Developers Console, set the channel's callback URL
 * // to https://<your-site>/api/auth/callback/line, and apply for "OpenID Connect: Email address
 * // permission" to receive the address.
 * const { handlers, auth } = Portcullis({ providers: [Line] })
 * ```
 * @see https://developers.line.biz/en/docs/line-login/integrate-line-login/
 * @see https://developers.line.biz/en/docs/line-login/verify-id-token/
 * @see https://developers.line.biz/en/reference/line-login/#verify-id-token
 */
import type { OAuthConfig, OAuthUserConfig, UserinfoContext } from './oauth.js'
import { assertOptions, withOverrides } from './overrides.js'

/**
 * The claims of a LINE ID token, as the verify endpoint returns them.
 * @see https://developers.line.biz/en/docs/line-login/verify-id-token/#payload
 * @see https://developers.line.biz/en/reference/line-login/#verify-id-token-response
 */
export interface LineProfile {
  /** `https://access.line.me`. */
  iss: string
  /** The LINE user id (`U` and 32 hex digits), per provider (channel owner): the key of the account. */
  sub: string
  /** The channel ID. */
  aud: string
  exp: number
  iat: number
  auth_time?: number
  nonce?: string
  /** How the user authenticated: `pwd`, `lineautologin`, `lineqr`, `linesso`, `mfa`. */
  amr?: string[]
  /** With the `profile` scope. */
  name?: string
  picture?: string
  /** With the `email` scope, when the channel has the address permission. */
  email?: string
  [claim: string]: unknown
}

/** Overrides of the LINE provider; every field optional. */
export type LineUserConfig = OAuthUserConfig<LineProfile>

/** One line for the providers table. */
export const quirks = 'Web ID tokens are HS256 (channel secret): oauth type, claims from the LINE verify endpoint; the address is never taken (no email_verified)'

const VERIFY_URL = 'https://api.line.me/oauth2/v2.1/verify'

/**
 * The LINE provider.
 *
 * Defaults: issuer `https://access.line.me`; scope `openid profile email`; client authentication
 * `client_secret_post` (LINE documents the channel ID and secret as form parameters); ID token
 * algorithm HS256; checks PKCE, `state` (required by LINE) and nonce. `id` is the `sub`. LINE's
 * claims have no `email_verified`, so the address comes with `emailVerified: false` and is never taken.
 *
 * Other LINE parameters go in `authorization.params`, e.g. `bot_prompt: 'aggressive'` to offer
 * adding your LINE Official Account, or `prompt: 'consent'`.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @see https://developers.line.biz/en/docs/line-login/integrate-line-login/#making-an-authorization-request
 */
export default function Line(options: LineUserConfig = {}): OAuthConfig<LineProfile> {
  assertOptions('Line', options)
  const defaults: OAuthConfig<LineProfile> = {
    id: 'line',
    name: 'LINE',
    type: 'oauth',
    issuer: 'https://access.line.me',
    authorization: { url: 'https://access.line.me/oauth2/v2.1/authorize', params: { scope: 'openid profile email' } },
    token: 'https://api.line.me/oauth2/v2.1/token',
    userinfo: { url: VERIFY_URL, request: (context) => verifyLineIdToken(context) },
    client: { token_endpoint_auth_method: 'client_secret_post', id_token_signed_response_alg: 'HS256' },
    checks: ['pkce', 'state', 'nonce'],
    profile: (profile) => ({
      id: profile.sub,
      name: profile.name || null,
      email: profile.email || null,
      // LINE's ID token has no email_verified claim, and LINE does not document the address as verified.
      emailVerified: false,
      image: profile.picture || null,
    }),
  }
  return withOverrides(defaults, options)
}

/**
 * `POST /oauth2/v2.1/verify` with the ID token of the token response: LINE checks its HS256
 * signature, audience and expiry, and answers the claims.
 */
async function verifyLineIdToken({ tokens, provider }: UserinfoContext): Promise<LineProfile> {
  const idToken = tokens.id_token
  if (typeof idToken !== 'string' || !idToken) throw new Error('LINE: the token response has no id_token; keep "openid" in the scope.')
  const url = provider.userinfoUrl ?? VERIFY_URL
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams({ id_token: idToken, client_id: provider.clientId }),
    signal: AbortSignal.timeout(10_000),
  })
  const body = (await response.json().catch(() => null)) as (LineProfile & { error?: unknown; error_description?: unknown }) | null
  if (!response.ok || !body || typeof body !== 'object') {
    // LINE's errors are `{ error, error_description }`, e.g. "IdToken expired."; never the token.
    const error = typeof body?.error === 'string' ? ` error=${body.error.slice(0, 64)}` : ''
    const description = typeof body?.error_description === 'string' ? ` (${body.error_description.slice(0, 200)})` : ''
    throw new Error(`LINE: POST ${url} refused the ID token: ${response.status}${error}${description}`)
  }
  if (typeof body.sub !== 'string' || !body.sub) throw new Error(`LINE: POST ${url} answered without a sub.`)
  // The claims LINE verified must be of this channel.
  if (String(body.aud) !== provider.clientId) throw new Error(`LINE: POST ${url} answered claims for another channel.`)
  return body
}

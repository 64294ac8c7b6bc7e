/**
 * One refresh token grant at the provider's token endpoint, and what its answer means: the part of
 * a refresh that every caller shares, whether the refresh is single-flight in this process
 * (refresh.ts) or leased among several (shared-refresh.ts).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
import * as oidc from 'openid-client'
import type { OAuthProvider } from './provider.js'
import { AuthError, RefreshAccessTokenError } from '../../errors.js'
import { describeError, redactError } from '../../events.js'
import { clientConfiguration } from './client.js'
import { errorBodyOf, safeCode } from './provider-errors.js'

/** A refresh's answer: the new token set, `expires_at` computed from `expires_in`. */
export interface RefreshedTokens {
  access_token: string
  /** The refresh token to use next: the rotated one, or the one used when the provider kept it valid. */
  refresh_token: string
  expires_at?: number
  token_type?: string
  scope?: string
  id_token?: string
}

/**
 * One refresh token grant at the provider's token endpoint (openid-client validates an ID token in
 * the answer, if any).
 * @throws RefreshAccessTokenError `invalid_grant` when the provider refused the refresh token, else `provider_error`.
 */
export async function refreshGrant(provider: OAuthProvider, refreshToken: string, now: number): Promise<RefreshedTokens> {
  let response: oidc.TokenEndpointResponse
  try {
    response = await oidc.refreshTokenGrant(await clientConfiguration(provider), refreshToken)
  } catch (error) {
    throw refreshError(provider, error)
  }
  // Not rotated: the token used is still the one to use. Kept in the answer so that a caller
  // following a chain of rotations never falls back to an older, already used token.
  const rotated = typeof response.refresh_token === 'string' && response.refresh_token ? response.refresh_token : undefined
  const tokens: RefreshedTokens = { access_token: response.access_token, refresh_token: rotated ?? refreshToken }
  if (typeof response.expires_in === 'number') tokens.expires_at = now + response.expires_in
  if (typeof response.token_type === 'string') tokens.token_type = response.token_type
  if (typeof response.scope === 'string') tokens.scope = response.scope
  if (typeof response.id_token === 'string') tokens.id_token = response.id_token
  return tokens
}

/** True when `tokens` has an access token valid for more than `skew` seconds (or of unknown expiry). */
export function isFresh(tokens: { access_token?: string | null; expires_at?: number | null }, now: number, skew: number): boolean {
  if (typeof tokens.access_token !== 'string' || !tokens.access_token) return false
  if (tokens.expires_at === undefined || tokens.expires_at === null) return true
  return tokens.expires_at >= 0 && tokens.expires_at - skew > now
}

/**
 * The provider's codes for a refresh token it refuses: RFC 6749 §5.2's, and GitHub's for a GitHub
 * App's refresh token that is expired, revoked or already used (sent with HTTP 200).
 */
const REFUSED = new Set(['invalid_grant', 'bad_refresh_token'])

/** Maps a failed grant: a refused refresh token (`invalid_grant`), or anything else. */
function refreshError(provider: OAuthProvider, error: unknown): RefreshAccessTokenError {
  const where = `Refreshing the access token of the "${provider.id}" provider failed`
  const answered = providerAnswer(error)
  if (answered) {
    const code = REFUSED.has(answered.error) ? 'invalid_grant' : 'provider_error'
    const description = answered.description ? ` (${JSON.stringify(answered.description.slice(0, 300))})` : ''
    const advice = code === 'invalid_grant' ? ' The refresh token is revoked or expired: the user must sign in again.' : ''
    return new RefreshAccessTokenError(code, provider.id, `${where}: the provider answered error=${JSON.stringify(answered.error)}${description}.${advice}`, { cause: redactError(error) })
  }
  const detail = error instanceof AuthError ? error.message : describeError(error)
  return new RefreshAccessTokenError('provider_error', provider.id, `${where}: ${detail}`, { cause: redactError(error) })
}

/** The OAuth error of the token endpoint's answer, when it gave one (GitHub's come with HTTP 200). */
function providerAnswer(error: unknown): { error: string; description?: string } | undefined {
  // The description as the provider sent it: oauth4webapi does not check that it is a string.
  if (error instanceof oidc.ResponseBodyError) return { error: safeCode(error.error), description: typeof error.error_description === 'string' ? error.error_description : undefined }
  if (error instanceof oidc.ClientError) {
    const answered = errorBodyOf(error)
    if (answered) return { error: safeCode(answered.error), description: answered.description }
  }
  return undefined
}

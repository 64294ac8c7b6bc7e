/**
 * The provider tokens a session can reach, for `getAccessToken()`: with JWT sessions they travel in
 * the session token's `provider_tokens` claim, with database sessions in the account row. This
 * module only shapes them (no OAuth code): it runs at sign-in and, for the `error` mark, on every
 * JWT session read.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6 Refreshing an Access Token
 */
import type { Account, AccountTokenFields, JWT, ProviderTokens } from '../types.js'

/** The session token claim that holds the provider tokens, keyed by provider id. */
export const PROVIDER_TOKENS_CLAIM = 'provider_tokens'

/**
 * What a JWT session keeps of a sign-in's token set: the access token, the refresh token and the
 * expiry (the ID token is not needed to call an API, and is the largest). `undefined` when the
 * sign-in brought no token (credentials, e-mail).
 */
export function providerTokensOf(account: Account | null | undefined): ProviderTokens | undefined {
  if (!account || (account.type !== 'oauth' && account.type !== 'oidc')) return undefined
  if (typeof account.access_token !== 'string' && typeof account.refresh_token !== 'string') return undefined
  return compactTokens(account)
}

/** The token fields worth keeping, without empty ones and without the default `token_type`. */
export function compactTokens(tokens: { access_token?: unknown; refresh_token?: unknown; expires_at?: unknown; token_type?: unknown }): ProviderTokens {
  const kept: ProviderTokens = {}
  if (typeof tokens.access_token === 'string' && tokens.access_token) kept.access_token = tokens.access_token
  if (typeof tokens.refresh_token === 'string' && tokens.refresh_token) kept.refresh_token = tokens.refresh_token
  if (typeof tokens.expires_at === 'number' && Number.isFinite(tokens.expires_at)) kept.expires_at = tokens.expires_at
  if (typeof tokens.token_type === 'string' && tokens.token_type.toLowerCase() !== 'bearer') kept.token_type = tokens.token_type
  return kept
}

/**
 * The `provider_tokens` claim of a new session: the sign-in's tokens under its provider, plus the
 * other providers' entries of the session it replaces when that was the same user (an account
 * linked while signed in keeps the first account's tokens reachable).
 */
export function signInProviderTokens(account: Account | null, previous: JWT | null, userId: string | undefined): Record<string, ProviderTokens> | undefined {
  const own = providerTokensOf(account)
  const kept = previous && userId !== undefined && previous.sub === userId ? tokensClaim(previous) : undefined
  if (!own) return kept && Object.keys(kept).length > 0 ? { ...kept } : undefined
  return { ...kept, [account!.provider]: own }
}

/** The `provider_tokens` claim when it is a plain object, else `undefined`. */
export function tokensClaim(token: JWT): Record<string, ProviderTokens> | undefined {
  const claim = token[PROVIDER_TOKENS_CLAIM]
  return claim && typeof claim === 'object' && !Array.isArray(claim) ? (claim as Record<string, ProviderTokens>) : undefined
}

/** A copy of `token` whose entry for `providerId` is `entry`. */
export function withProviderTokens(token: JWT, providerId: string, entry: ProviderTokens): JWT {
  return { ...token, [PROVIDER_TOKENS_CLAIM]: { ...tokensClaim(token), [providerId]: entry } }
}

/** True when a provider's entry says that only a new sign-in gives a token (`session.error`). */
export function hasRefreshError(token: JWT): boolean {
  const claim = tokensClaim(token)
  if (!claim) return false
  for (const entry of Object.values(claim)) if (entry && typeof entry === 'object' && typeof entry.error === 'string') return true
  return false
}

/**
 * The stored account's new token fields after a sign-in with an account already linked: the new
 * token set replaces the old one, except the refresh token when the provider sent none (Google, for
 * one, sends it only on the first consent).
 */
export function signInTokenChanges(account: Account): Partial<AccountTokenFields> {
  const text = (value: unknown): string | null => (typeof value === 'string' && value ? value : null)
  const changes: Partial<AccountTokenFields> = {
    access_token: text(account.access_token),
    expires_at: typeof account.expires_at === 'number' && Number.isFinite(account.expires_at) ? account.expires_at : null,
    token_type: text(account.token_type),
    scope: text(account.scope),
    id_token: text(account.id_token),
    session_state: text(account.session_state),
  }
  const refreshToken = text(account.refresh_token)
  if (refreshToken) changes.refresh_token = refreshToken
  return changes
}

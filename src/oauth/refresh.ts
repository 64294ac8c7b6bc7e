/**
 * The refresh token grant, once per refresh token in this instance. Concurrent callers holding the
 * same refresh token share one request (single-flight), and the outcome is remembered for a while:
 * a refresh token this instance has already used is never sent again, because an authorization
 * server that rotates refresh tokens treats a used one coming back as theft and revokes the whole
 * grant, the new tokens included (OAuth 2.0 Security BCP §4.14.2; oidc-provider, Auth0 and Okta do).
 * A request that still carries the old tokens (a JWT cookie sent before the new one arrived) gets
 * the new ones instead.
 *
 * Loaded by `getAccessToken()` only (dynamic import), so openid-client stays off the session-read path.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.14.2
 */
import * as oidc from 'openid-client'
import type { OAuthProvider } from '../config/oauth-provider.js'
import type { ResolvedConfig } from '../config/types.js'
import { AuthError, RefreshAccessTokenError } from '../errors.js'
import { describeError, redactError } from '../events.js'
import { clientConfiguration } from './client.js'
import { safeCode } from './errors.js'

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

interface Remembered {
  tokens: RefreshedTokens
  /** Forgotten after this time (ms since the epoch). */
  until: number
}

interface RefreshState {
  flights: Map<string, Promise<RefreshedTokens>>
  /** Refresh token used → what it was exchanged for; least recently used first. */
  used: Map<string, Remembered>
}

/**
 * How long a used refresh token's answer is remembered. A browser whose response carrying the new
 * cookie was lost comes back with the old one; within this time it gets the new tokens rather than
 * a replay that would revoke them.
 */
const REMEMBER_MS = 24 * 60 * 60 * 1000
/** The most used refresh tokens remembered per instance (each entry is a token set, ~0.2-4 KB). */
const REMEMBER_MAX = 1000
/** Rotations followed for a request whose tokens are several refreshes old. */
const MAX_HOPS = 8

// Per Portcullis instance (each resolves its own config): two instances in one process behave as
// two processes would, which the tests rely on.
const states = new WeakMap<ResolvedConfig, RefreshState>()

function stateOf(config: ResolvedConfig): RefreshState {
  let state = states.get(config)
  if (!state) states.set(config, (state = { flights: new Map(), used: new Map() }))
  return state
}

/**
 * Fresh tokens for `refreshToken`: the ones this instance already got for it (following later
 * rotations, as long as they are fresh for `skew` seconds), else one refresh request shared by
 * every concurrent caller.
 *
 * @param now Seconds since the epoch.
 * @throws RefreshAccessTokenError `invalid_grant` or `provider_error`.
 */
export async function refreshOnce(config: ResolvedConfig, provider: OAuthProvider, refreshToken: string, now: number, skew: number): Promise<RefreshedTokens> {
  const state = stateOf(config)
  let current = refreshToken
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const remembered = recall(state, provider, current)
    if (!remembered) break
    if (isFresh(remembered, now, skew)) return remembered
    const next = remembered.refresh_token
    // Not rotated: the same refresh token is still the one to use.
    if (next === current) break
    current = next
  }
  const key = keyOf(provider, current)
  return shareFlight(state.flights, key, () =>
    refreshGrant(provider, current, now).then((tokens) => {
      remember(state, key, tokens)
      return tokens
    }),
  )
}

/**
 * The flight under way for `key`, or a new one from `start`, shared by every caller until it settles
 * (single-flight: concurrent callers make one request between them).
 */
export function shareFlight<T>(flights: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  let flight = flights.get(key)
  if (!flight) {
    flight = start()
    flights.set(key, flight)
    const done = () => flights.delete(key)
    flight.then(done, done)
  }
  return flight
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

/** Maps a failed grant: the provider's `invalid_grant` (RFC 6749 §5.2), or anything else. */
function refreshError(provider: OAuthProvider, error: unknown): RefreshAccessTokenError {
  const where = `Refreshing the access token of the "${provider.id}" provider failed`
  const answered = providerAnswer(error)
  if (answered) {
    const code = answered.error === 'invalid_grant' ? 'invalid_grant' : 'provider_error'
    const description = answered.description ? ` (${JSON.stringify(answered.description.slice(0, 300))})` : ''
    const advice = code === 'invalid_grant' ? ' The refresh token is revoked or expired: the user must sign in again.' : ''
    return new RefreshAccessTokenError(code, provider.id, `${where}: the provider answered error=${JSON.stringify(answered.error)}${description}.${advice}`, { cause: redactError(error) })
  }
  const detail = error instanceof AuthError ? error.message : describeError(error)
  return new RefreshAccessTokenError('provider_error', provider.id, `${where}: ${detail}`, { cause: redactError(error) })
}

/** The OAuth error of the token endpoint's answer, when it gave one (GitHub's come with HTTP 200). */
function providerAnswer(error: unknown): { error: string; description?: string } | undefined {
  if (error instanceof oidc.ResponseBodyError) return { error: safeCode(error.error), description: error.error_description }
  if (error instanceof oidc.ClientError) {
    const body = ((error.cause as { cause?: unknown } | undefined)?.cause as { body?: { error?: unknown; error_description?: unknown } } | undefined)?.body
    if (body && typeof body.error === 'string') return { error: safeCode(body.error), description: typeof body.error_description === 'string' ? body.error_description : undefined }
  }
  return undefined
}

function keyOf(provider: OAuthProvider, refreshToken: string): string {
  return `${provider.id}\u0000${refreshToken}`
}

function recall(state: RefreshState, provider: OAuthProvider, refreshToken: string): RefreshedTokens | undefined {
  const key = keyOf(provider, refreshToken)
  const entry = state.used.get(key)
  if (!entry) return undefined
  if (entry.until <= Date.now()) {
    state.used.delete(key)
    return undefined
  }
  return entry.tokens
}

function remember(state: RefreshState, key: string, tokens: RefreshedTokens): void {
  state.used.delete(key)
  state.used.set(key, { tokens, until: Date.now() + REMEMBER_MS })
  if (state.used.size > REMEMBER_MAX) state.used.delete(state.used.keys().next().value!)
}

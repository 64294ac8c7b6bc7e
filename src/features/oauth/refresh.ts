/**
 * The refresh token grant, once per refresh token in this instance. Concurrent callers holding the
 * same refresh token share one request (single-flight), and the outcome is remembered for a while:
 * a refresh token this instance has already used is never sent again, because an authorization
 * server that rotates refresh tokens treats a used one coming back as theft and revokes the whole
 * grant, the new tokens included (OAuth 2.0 Security BCP §4.14.2; oidc-provider, Auth0 and Okta do).
 * A request that still carries the old tokens (a JWT cookie sent before the new one arrived) gets
 * the new ones instead.
 *
 * With a shared store (JWT sessions with `session.store`), the same holds across processes: see
 * shared-refresh.ts.
 *
 * Loaded by `getAccessToken()` only (dynamic import), so openid-client stays off the session-read path.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.14.2
 */
import type { OAuthProvider } from './provider.js'
import type { ResolvedConfig } from '../../config/types.js'
import { isFresh, refreshGrant, type RefreshedTokens } from './refresh-grant.js'
import { sharedRefresh } from './shared-refresh.js'

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
 * every concurrent caller (and, with a shared store, by every process).
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
  const shared = config.sharedStore
  return shareFlight(state.flights, key, () =>
    (shared ? sharedRefresh(config, shared, provider, current, now, skew) : refreshGrant(provider, current, now)).then((tokens) => {
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

/**
 * `getAccessToken()`: a valid access token of the signed-in user's account at a provider, refreshed
 * when it has expired or expires within `skewSeconds`, and the new token set stored where the
 * session keeps it: re-sealed into the session cookie (JWT sessions), or written to the account row
 * (database sessions).
 *
 * Database sessions can run in several processes on one database, so a refresh there takes a lease
 * on the account row first: a compare-and-set of `expires_at` to minus the lease's end, expecting the
 * refresh token and expiry just read. Of concurrent processes exactly one wins it and refreshes; the
 * others wait for the row to change and use the tokens it then holds, never sending the refresh
 * token the winner is rotating. A lease left by a crashed process expires after `LEASE_SECONDS`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
import type { OAuthProvider } from './provider.js'
import type { ResolvedConfig } from '../../config/types.js'
import { RefreshAccessTokenError, SessionTokenTooLargeError, type RefreshAccessTokenCode } from '../../errors.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { peekDatabaseSession } from '../../session/database-strategy.js'
import { peekJwtToken, resealJwtToken } from '../../session/jwt-strategy.js'
import { compactTokens, tokensClaim, withProviderTokens } from '../../session/provider-tokens.js'
import type { SessionRequest } from '../../session/types.js'
import type { AccountTokenFields, Adapter, AdapterAccount, JWT, ProviderTokens } from '../../types.js'
import { isFresh, type RefreshedTokens } from './refresh-grant.js'
import { refreshOnce, shareFlight } from './refresh.js'

/** Options of `getAccessToken()`. */
export interface AccessTokenOptions {
  /**
   * Refresh when the access token expires within this many seconds, so that it does not expire on
   * the way to the API. Default 60.
   */
  skewSeconds?: number | undefined
  /** Database sessions: which account, when the user has several at the provider. */
  providerAccountId?: string | undefined
}

/** What `freshAccessToken` resolved: the token, or the error; and the session cookies to send either way. */
export type AccessTokenResult = { accessToken: string; error?: undefined; cookies: OutgoingCookie[] } | { accessToken?: undefined; error: RefreshAccessTokenError; cookies: OutgoingCookie[] }

/** Default `skewSeconds`. */
export const DEFAULT_SKEW_SECONDS = 60
/** How long a refresh may hold the account row before another process may take over. */
// Longer than openid-client's 30-second HTTP timeout, so a slow refresh cannot outlive its lease.
const LEASE_SECONDS = 60
/** Pauses between reads of a row another process holds the lease on. */
const LEASE_POLL_MS = [10, 25, 50, 100, 200]
/** Rounds of read, lease and refresh before giving up (each lost round means another process progressed). */
const MAX_ROUNDS = 5

/**
 * A valid access token of the request's session for `provider`.
 * Never rejects with a refresh problem: that is the result's `error` (any other error, such as an
 * AdapterError, rejects).
 */
export async function freshAccessToken(request: SessionRequest, provider: OAuthProvider, options: AccessTokenOptions = {}): Promise<AccessTokenResult> {
  const skew = options.skewSeconds ?? DEFAULT_SKEW_SECONDS
  if (!Number.isFinite(skew) || skew < 0) throw new TypeError(`getAccessToken(): skewSeconds must be a number of seconds from 0; got ${String(options.skewSeconds)}.`)
  try {
    return request.config.session.strategy === 'database'
      ? { accessToken: await databaseAccessToken(request, provider, skew, options.providerAccountId), cookies: [] }
      : await jwtAccessToken(request, provider, skew)
  } catch (error) {
    if (error instanceof RefreshAccessTokenError) return { error, cookies: [] }
    throw error
  }
}

// ---- JWT sessions: the tokens live in the session cookie. ----

async function jwtAccessToken(request: SessionRequest, provider: OAuthProvider, skew: number): Promise<AccessTokenResult> {
  const token = await peekJwtToken(request)
  if (!token) throw notSignedIn(provider)
  const entry = tokensClaim(token)?.[provider.id]
  if (!entry || typeof entry !== 'object') {
    throw new RefreshAccessTokenError(
      'no_account',
      provider.id,
      `getAccessToken(): the session token carries no tokens of the "${provider.id}" provider: the user signed in with another provider (or before tokens were kept), or the jwt callback dropped the provider_tokens claim.`,
    )
  }
  if (entry.error) throw markedError(provider, entry.error)
  await assertStillLinked(request, token, provider)
  if (isFresh(entry, request.now, skew)) return { accessToken: entry.access_token!, cookies: [] }
  if (!entry.refresh_token) return markJwtSession(request, token, provider, 'no_refresh_token')

  let refreshed: RefreshedTokens
  try {
    refreshed = await refreshOnce(request.config, provider, entry.refresh_token, request.now, skew)
  } catch (error) {
    if (error instanceof RefreshAccessTokenError && error.code === 'invalid_grant') return markJwtSession(request, token, provider, 'invalid_grant', error)
    throw error
  }
  const next: ProviderTokens = compactTokens(refreshed)
  const cookies = await resealOrKeep(request, withProviderTokens(token, provider.id, next))
  return { accessToken: refreshed.access_token, cookies }
}

/**
 * With an adapter, the user's account at the provider must still be linked: `unlinkAccount()` takes
 * the tokens out of the cookie of the browser that unlinked it only, and every other browser's copy
 * would otherwise keep calling (and refreshing at) the provider for an account the user removed.
 * @throws RefreshAccessTokenError no_account
 */
async function assertStillLinked(request: SessionRequest, token: JWT, provider: OAuthProvider): Promise<void> {
  const adapter = request.config.adapter
  if (!adapter || typeof adapter.getAccountsByUserId !== 'function' || typeof token.sub !== 'string') return
  const accounts = await adapter.getAccountsByUserId(token.sub)
  if (accounts.some((account) => account.provider === provider.id)) return
  throw new RefreshAccessTokenError('no_account', provider.id, `getAccessToken(): the signed-in user's "${provider.id}" account was unlinked; its tokens in this session are no longer used.`)
}

/** Re-seals the session with the provider's entry replaced by the error, and answers with that error. */
async function markJwtSession(request: SessionRequest, token: JWT, provider: OAuthProvider, code: 'no_refresh_token' | 'invalid_grant', cause?: RefreshAccessTokenError): Promise<AccessTokenResult> {
  const error = cause ?? noRefreshToken(provider)
  return { error, cookies: await resealOrKeep(request, withProviderTokens(token, provider.id, { error: code })) }
}

/** A token too large for `jwt.maxSize` keeps the old cookie (as a read's re-issue does) and logs why. */
async function resealOrKeep(request: SessionRequest, token: JWT): Promise<OutgoingCookie[]> {
  try {
    return await resealJwtToken(request, token)
  } catch (error) {
    if (!(error instanceof SessionTokenTooLargeError)) throw error
    request.config.logger.error(error.type, `${error.message} getAccessToken() could not store the refreshed provider tokens; the session cookie is kept as it was.`)
    return []
  }
}

// ---- Database sessions: the tokens live in the account row. ----

type TokenAdapter = Adapter & Required<Pick<Adapter, 'getAccountsByUserId' | 'updateAccount'>>

const accountFlights = new WeakMap<ResolvedConfig, Map<string, Promise<string>>>()

async function databaseAccessToken(request: SessionRequest, provider: OAuthProvider, skew: number, providerAccountId: string | undefined): Promise<string> {
  const adapter = request.config.adapter
  if (!adapter || typeof adapter.getAccountsByUserId !== 'function' || typeof adapter.updateAccount !== 'function') {
    throw new RefreshAccessTokenError('unsupported_adapter', provider.id, 'getAccessToken() with database sessions needs an adapter with getAccountsByUserId and updateAccount (KnexAdapter has both).')
  }
  const session = await peekDatabaseSession(request)
  if (!session) throw notSignedIn(provider)
  const account = await findAccount(adapter as TokenAdapter, session.userId, provider, providerAccountId)
  if (isFresh(account, request.now, skew)) return account.access_token!

  // One refresh per account in this instance: the calls that find one under way wait for it.
  let flights = accountFlights.get(request.config)
  if (!flights) accountFlights.set(request.config, (flights = new Map()))
  const key = `${account.provider}\u0000${account.providerAccountId}`
  return shareFlight(flights, key, () => refreshStoredAccount(request, adapter as TokenAdapter, provider, account, skew))
}

/** The user's account at the provider. @throws RefreshAccessTokenError no_account, ambiguous */
async function findAccount(adapter: TokenAdapter, userId: string, provider: OAuthProvider, providerAccountId: string | undefined): Promise<AdapterAccount> {
  const accounts = (await adapter.getAccountsByUserId(userId)).filter(
    (account) => account.provider === provider.id && (providerAccountId === undefined || account.providerAccountId === providerAccountId),
  )
  if (accounts.length === 0) {
    throw new RefreshAccessTokenError('no_account', provider.id, `getAccessToken(): the signed-in user has no "${provider.id}" account${providerAccountId ? ` with id ${providerAccountId}` : ''}.`)
  }
  if (accounts.length > 1) {
    throw new RefreshAccessTokenError('ambiguous', provider.id, `getAccessToken(): the signed-in user has ${accounts.length} "${provider.id}" accounts; pass { providerAccountId } to say which.`)
  }
  return accounts[0]!
}

/**
 * Refreshes the stored account under a lease, re-reading it whenever another process got there
 * first, and stores the new token set.
 */
async function refreshStoredAccount(request: SessionRequest, adapter: TokenAdapter, provider: OAuthProvider, account: AdapterAccount, skew: number): Promise<string> {
  const ref = { provider: account.provider, providerAccountId: account.providerAccountId }
  let current: AdapterAccount = account
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = nowInSeconds()
    if (isFresh(current, now, skew)) return current.access_token!
    if (current.expires_at !== null && current.expires_at < 0 && -current.expires_at > now) {
      // Another process is refreshing: wait until it stores its tokens or its lease runs out.
      current = await awaitLease(adapter, current, -current.expires_at)
      continue
    }
    if (!current.refresh_token) throw noRefreshToken(provider)

    const lease = -(now + LEASE_SECONDS)
    const expected = { refresh_token: current.refresh_token, expires_at: current.expires_at }
    const claimed = await adapter.updateAccount({ ...ref, expires_at: lease }, { expect: expected })
    if (!claimed) {
      current = await reread(adapter, current)
      continue
    }

    let refreshed: RefreshedTokens
    try {
      refreshed = await refreshOnce(request.config, provider, current.refresh_token, now, skew)
    } catch (error) {
      // Give the row back as it was. If that fails, the row changed under the lease (a new sign-in
      // stored a new token set, or the lease ran out and another process took over): use it, whatever
      // this refresh failed with, since the failure concerns tokens the row no longer holds.
      const released = await adapter.updateAccount({ ...ref, expires_at: current.expires_at }, { expect: { refresh_token: current.refresh_token, expires_at: lease } })
      if (released) throw error
      current = await reread(adapter, current)
      continue
    }
    const stored = await adapter.updateAccount({ ...ref, ...storedChanges(refreshed) }, { expect: { refresh_token: current.refresh_token, expires_at: lease } })
    if (!stored) {
      request.config.logger.warn(
        'RefreshAccessTokenLeaseLost',
        `The "${provider.id}" account's row changed while its access token was being refreshed (the refresh outlived its ${LEASE_SECONDS}-second lease, or a sign-in stored new tokens); the refreshed tokens are used for this call only.`,
      )
    }
    return refreshed.access_token
  }
  throw new RefreshAccessTokenError('provider_error', provider.id, `getAccessToken(): the "${provider.id}" account's tokens kept changing under ${MAX_ROUNDS} refresh attempts; try again.`)
}

/** The account row once the lease that `holder` shows has ended: changed by its holder, or expired. */
async function awaitLease(adapter: TokenAdapter, holder: AdapterAccount, leaseEnd: number): Promise<AdapterAccount> {
  for (let poll = 0; ; poll++) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS[Math.min(poll, LEASE_POLL_MS.length - 1)]))
    const row = await reread(adapter, holder)
    if (row.expires_at !== holder.expires_at || row.refresh_token !== holder.refresh_token || row.access_token !== holder.access_token) return row
    if (nowInSeconds() >= leaseEnd) return row
  }
}

async function reread(adapter: TokenAdapter, account: AdapterAccount): Promise<AdapterAccount> {
  const row = (await adapter.getAccountsByUserId(account.userId)).find((candidate) => candidate.provider === account.provider && candidate.providerAccountId === account.providerAccountId)
  if (!row) throw new RefreshAccessTokenError('no_account', account.provider, `getAccessToken(): the "${account.provider}" account was unlinked meanwhile.`)
  return row
}

/** The row's new token fields; the refresh token stays when the provider did not rotate it. */
function storedChanges(tokens: RefreshedTokens): Partial<AccountTokenFields> {
  const changes: Partial<AccountTokenFields> = {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    expires_at: tokens.expires_at ?? null,
  }
  if (tokens.token_type !== undefined) changes.token_type = tokens.token_type
  if (tokens.scope !== undefined) changes.scope = tokens.scope
  if (tokens.id_token !== undefined) changes.id_token = tokens.id_token
  return changes
}

// ---- Errors ----

function notSignedIn(provider: OAuthProvider): RefreshAccessTokenError {
  return new RefreshAccessTokenError('not_signed_in', provider.id, 'getAccessToken(): nobody is signed in on this request.')
}

function noRefreshToken(provider: OAuthProvider): RefreshAccessTokenError {
  return new RefreshAccessTokenError(
    'no_refresh_token',
    provider.id,
    `getAccessToken(): the "${provider.id}" access token has expired and the provider gave no refresh token. Ask for one (the offline_access scope; Google: authorization params access_type: 'offline', prompt: 'consent') and sign in again.`,
  )
}

function markedError(provider: OAuthProvider, code: RefreshAccessTokenCode): RefreshAccessTokenError {
  if (code === 'no_refresh_token') return noRefreshToken(provider)
  return new RefreshAccessTokenError('invalid_grant', provider.id, `getAccessToken(): the "${provider.id}" provider refused this session's refresh token earlier; the user must sign in with it again.`)
}

function nowInSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

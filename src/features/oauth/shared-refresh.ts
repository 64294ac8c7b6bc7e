/**
 * The refresh token grant across processes, for JWT sessions with a shared store (`session.store`
 * on Redis or a database, or else the rate limit's): the same guarantees as refresh.ts gives one
 * process, held by the store for all of them. Of the processes holding one refresh token, the one
 * that claims its lease sends it; the others wait for its answer, which the store keeps (sealed
 * with the app's secret) for a day, so a cookie still carrying the used token gets the new ones
 * on any process and the used token is never sent twice. A store that cannot be reached fails the
 * call with its AdapterError: falling back to a refresh per process would spend the token twice.
 *
 * Keys in the store: `refresh:lease:<h>` and `refresh:used:<h>`, where `<h>` is an HMAC of the
 * provider id and the refresh token (the token itself is never stored).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.14.2
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import type { OAuthProvider } from './provider.js'
import type { ResolvedConfig } from '../../config/types.js'
import { RefreshAccessTokenError } from '../../errors.js'
import { decryptJwe, encryptJwe } from '../../session/jwe.js'
import { deriveKeyRing, type KeyRing } from '../../session/keys.js'
import type { SessionStore } from '../../session/store/types.js'
import { isFresh, refreshGrant, type RefreshedTokens } from './refresh-grant.js'

/** How long a used refresh token's answer is kept (as refresh.ts remembers it in one process). */
const ANSWER_MS = 24 * 60 * 60 * 1000
/** How long a claim holds: longer than openid-client's 30-second HTTP timeout, so a slow refresh cannot outlive it. */
const LEASE_MS = 60 * 1000
/** Pauses between reads while another process holds the lease. */
const POLL_MS = [10, 25, 50, 100, 200]
/** Rotations followed for a token several refreshes old, and rounds of claiming before giving up. */
const MAX_HOPS = 8
const MAX_ROUNDS = 5

/** What the store keeps for a used refresh token: the tokens it gave, or that the provider refused it. */
type Answer = { tokens: RefreshedTokens } | { refused: string }

interface SharedKeys {
  readonly ring: KeyRing
  readonly hmacKey: Buffer
}

const keysByConfig = new WeakMap<ResolvedConfig, SharedKeys>()

function keysOf(config: ResolvedConfig): SharedKeys {
  let keys = keysByConfig.get(config)
  if (!keys) {
    // Keys of their own (another salt), so an answer in the store can never be taken for a session cookie.
    const ring = deriveKeyRing(config.secrets, 'portcullis.refresh-answer')
    const hmacKey = Buffer.from(hkdfSync('sha256', config.secrets[0]!, 'portcullis.refresh-key', 'Portcullis refresh token key', 32))
    keysByConfig.set(config, (keys = { ring, hmacKey }))
  }
  return keys
}

/**
 * Fresh tokens for `refreshToken`, refreshed by one process of all those sharing `store`.
 *
 * @param now Seconds since the epoch.
 * @throws RefreshAccessTokenError `invalid_grant` or `provider_error`; AdapterError when the store fails.
 */
export async function sharedRefresh(config: ResolvedConfig, store: SessionStore, provider: OAuthProvider, refreshToken: string, now: number, skew: number): Promise<RefreshedTokens> {
  const keys = keysOf(config)
  let current = refreshToken
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await follow(keys, store, provider, current, now, skew)
    if ('tokens' in found) return found.tokens
    current = found.unused
    const id = keyOf(keys, provider, current)
    if (await store.claim(`refresh:lease:${id}`, randomBytes(8).toString('base64url'), LEASE_MS)) {
      return refreshUnderLease(keys, store, provider, current, id, now)
    }
    await awaitAnswer(store, id)
  }
  throw new RefreshAccessTokenError('provider_error', provider.id, `getAccessToken(): the "${provider.id}" refresh token kept being claimed by other processes under ${MAX_ROUNDS} attempts; try again.`)
}

/**
 * Follows the store's answers from `refreshToken` along its rotations: fresh tokens when one of
 * them has them, else the newest refresh token of the chain, which nobody has used yet.
 */
async function follow(keys: SharedKeys, store: SessionStore, provider: OAuthProvider, refreshToken: string, now: number, skew: number): Promise<{ tokens: RefreshedTokens } | { unused: string }> {
  let current = refreshToken
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const answer = await readAnswer(keys, store, keyOf(keys, provider, current))
    if (!answer) break
    if ('refused' in answer) throw refused(provider)
    if (isFresh(answer.tokens, now, skew)) return answer
    // Not rotated: the same refresh token is still the one to use.
    if (answer.tokens.refresh_token === current) break
    current = answer.tokens.refresh_token
  }
  return { unused: current }
}

/** Sends the refresh token while holding its lease, and leaves the answer for the other processes. */
async function refreshUnderLease(keys: SharedKeys, store: SessionStore, provider: OAuthProvider, refreshToken: string, id: string, now: number): Promise<RefreshedTokens> {
  try {
    // A holder may have finished (answer kept, lease removed) between this process's read and its claim.
    const done = await readAnswer(keys, store, id)
    if (done) {
      if ('refused' in done) throw refused(provider)
      return done.tokens
    }
    let tokens: RefreshedTokens
    try {
      tokens = await refreshGrant(provider, refreshToken, now)
    } catch (error) {
      // A refused token stays refused: the others are told rather than sending it again.
      if (error instanceof RefreshAccessTokenError && error.code === 'invalid_grant') await writeAnswer(keys, store, id, { refused: 'invalid_grant' })
      throw error
    }
    await writeAnswer(keys, store, id, { tokens })
    return tokens
  } finally {
    // A release that fails (logged by the store's guard) must not fail a refresh that got its tokens:
    // the others wait for the answer, written above, and the lease lapses by itself after LEASE_MS.
    await store.remove(`refresh:lease:${id}`).catch(() => {})
  }
}

/** Waits until the answer for `id` is kept or its lease is gone (its holder failed or crashed). */
async function awaitAnswer(store: SessionStore, id: string): Promise<void> {
  for (let poll = 0; ; poll++) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(poll, POLL_MS.length - 1)]))
    if ((await store.get(`refresh:used:${id}`)) !== null || (await store.get(`refresh:lease:${id}`)) === null) return
  }
}

async function readAnswer(keys: SharedKeys, store: SessionStore, id: string): Promise<Answer | undefined> {
  const sealed = await store.get(`refresh:used:${id}`)
  if (sealed === null) return undefined
  // Sealed under another secret (rotated away) or damaged: as if there were none.
  const plaintext = decryptJwe(sealed, keys.ring)
  return plaintext === null ? undefined : (JSON.parse(plaintext) as Answer)
}

async function writeAnswer(keys: SharedKeys, store: SessionStore, id: string, answer: Answer): Promise<void> {
  await store.put(`refresh:used:${id}`, encryptJwe(JSON.stringify(answer), keys.ring.current), ANSWER_MS)
}

function keyOf(keys: SharedKeys, provider: OAuthProvider, refreshToken: string): string {
  return createHmac('sha256', keys.hmacKey).update(`${provider.id}\u0000${refreshToken}`).digest('base64url')
}

function refused(provider: OAuthProvider): RefreshAccessTokenError {
  return new RefreshAccessTokenError('invalid_grant', provider.id, `Refreshing the access token of the "${provider.id}" provider failed: the provider refused this refresh token (another process asked first). The user must sign in again.`)
}

/**
 * What the refresh token grant remembers, as units against a token endpoint on loopback (Acme,
 * test/support/acme-provider.ts) that rotates every refresh token it is sent and counts them.
 *
 * In one process (refresh.ts): a used refresh token's answer is kept for 24 hours and for the 1,000
 * most recent tokens, and within those a token is never sent twice. Across processes (shared-refresh.ts,
 * on the memory store): the answer kept in the store for 24 hours; a process that finds the token's
 * lease held waits for its holder's answer, however long the holder takes, and refreshes itself when
 * the holder fails; a holder that finished between another process's read and its claim is not
 * repeated; a token refused once is refused everywhere with a message saying so; and a process that
 * keeps losing the claim gives up after five rounds without sending the token.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { RefreshAccessTokenError } from 'portcullis'
import type { OAuthProvider } from '../../src/features/oauth/provider.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import type { ResolvedConfig } from '../../src/config/types.js'
import { refreshOnce } from '../../src/features/oauth/refresh.js'
import { sharedRefresh } from '../../src/features/oauth/shared-refresh.js'
import { memoryStore } from '../../src/session/store/memory.js'
import type { SessionStore } from '../../src/session/store/types.js'
import type { ProviderApi } from '../providers/provider-api.js'
import { startAcme } from '../support/acme-provider.js'
import { SECRET } from '../support/flow.js'
import { silentLogger } from '../support/oauth-app.js'
import { rejectionOf } from '../support/rejection.js'

/** Seconds since the epoch given as "now" to the grant: the tokens it returns are fresh for days after it. */
const NOW = 1_800_000_000
const DAY_MS = 24 * 60 * 60 * 1000

let api: ProviderApi
let acme: OAuthProvider
/** Refresh tokens the endpoint was sent, in order. */
let sent: string[] = []
/** Run before the endpoint answers a refresh token; may answer instead (an outage, a refusal). */
let before: ((refreshToken: string) => Promise<{ status: number; json: unknown } | undefined>) | undefined

beforeAll(async () => {
  const started = await startAcme(
    {
      'POST /token': async (request) => {
        const refreshToken = new URLSearchParams(request.body).get('refresh_token')!
        sent.push(refreshToken)
        const instead = await before?.(refreshToken)
        if (instead) return instead
        return { json: { access_token: `at(${refreshToken})`, token_type: 'Bearer', expires_in: 10 * 24 * 3600, refresh_token: `next(${refreshToken})` } }
      },
    },
    { acme: {} },
  )
  api = started.api
  acme = started.providers.get('acme')!
})

afterAll(() => api.close())

afterEach(() => {
  jest.restoreAllMocks()
  sent = []
  before = undefined
})

/** A Portcullis instance's resolved configuration: a process of its own, as far as refresh.ts's memory goes. */
function instance(): ResolvedConfig {
  return resolveConfig({ secret: SECRET, logger: silentLogger, providers: [] }, FEATURES)
}

/** Date.now() answers `at` (ms) until told otherwise. */
function clockAt(at: number): void {
  jest.spyOn(Date, 'now').mockReturnValue(at)
}

describe('refreshOnce: the used refresh tokens one process remembers', () => {
  it('answers a used token from memory for 24 hours, to the millisecond, and sends it again after', async () => {
    const config = instance()
    const start = Date.now()
    clockAt(start)
    const first = await refreshOnce(config, acme, 'rt-day', NOW, 0)
    expect(first.access_token).toBe('at(rt-day)')

    clockAt(start + DAY_MS - 1)
    expect(await refreshOnce(config, acme, 'rt-day', NOW, 0)).toEqual(first)
    expect(sent).toEqual(['rt-day'])

    clockAt(start + DAY_MS)
    expect((await refreshOnce(config, acme, 'rt-day', NOW, 0)).access_token).toBe('at(rt-day)')
    expect(sent).toEqual(['rt-day', 'rt-day'])
  })

  // 1,003 grants over loopback: about 2 s, but over the default 20 s on a machine loaded many times over; a test
  // cut off at its timeout would run on into the next ones and send tokens in them.
  it('keeps the 1,000 most recently used tokens: the 1,001st forgets the oldest only', async () => {
    const config = instance()
    for (let index = 0; index <= 1000; index++) await refreshOnce(config, acme, `rt-${index}`, NOW, 0)
    expect(sent).toHaveLength(1001)

    // The second oldest and the newest are still remembered …
    await refreshOnce(config, acme, 'rt-1', NOW, 0)
    await refreshOnce(config, acme, 'rt-1000', NOW, 0)
    expect(sent).toHaveLength(1001)
    // … the oldest is not.
    await refreshOnce(config, acme, 'rt-0', NOW, 0)
    expect(sent.slice(1001)).toEqual(['rt-0'])
  }, 120_000)
})

/** `store` with its calls counted, and its reads of `refresh:used:` keys hidden from it `hideUsed` times. */
function counted(store: SessionStore, hideUsed = 0): { store: SessionStore; reads: () => number; claims: () => number } {
  let reads = 0
  let claims = 0
  let hidden = 0
  return {
    store: {
      ...store,
      async get(key) {
        reads++
        if (key.startsWith('refresh:used:') && hidden < hideUsed) {
          hidden++
          return null
        }
        return store.get(key)
      },
      async claim(key, value, ttlMs) {
        claims++
        return store.claim(key, value, ttlMs)
      },
    },
    reads: () => reads,
    claims: () => claims,
  }
}

/** Settles once `condition` holds, checked every few milliseconds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2))
}

const refusedMessage =
  'Refreshing the access token of the "acme" provider failed: the provider refused this refresh token (another process asked first). The user must sign in again.'

describe('sharedRefresh: the used refresh tokens processes share through the store', () => {
  it('keeps a used token’s answer in the store for 24 hours, to the millisecond', async () => {
    const store = memoryStore()
    const start = Date.now()
    clockAt(start)
    const first = await sharedRefresh(instance(), store, acme, 'rt-shared-day', NOW, 0)

    clockAt(start + DAY_MS - 1)
    expect(await sharedRefresh(instance(), store, acme, 'rt-shared-day', NOW, 0)).toEqual(first)
    expect(sent).toEqual(['rt-shared-day'])

    clockAt(start + DAY_MS)
    await sharedRefresh(instance(), store, acme, 'rt-shared-day', NOW, 0)
    expect(sent).toEqual(['rt-shared-day', 'rt-shared-day'])
  })

  /**
   * While the holder's request for `refreshToken` is at the token endpoint (it holds the lease), another
   * process asks for the same token; the endpoint answers the holder once that process has read the
   * store `reads` times, with `answer` (else the new tokens). The endpoint answers any later request at once.
   */
  function waiterDuringHolder(store: SessionStore, refreshToken: string, reads: number, answer?: { status: number; json: unknown }) {
    const waiter = counted(store)
    let waiting: Promise<unknown> | undefined
    before = async () => {
      if (waiting) return undefined
      waiting = sharedRefresh(instance(), waiter.store, acme, refreshToken, NOW, 0)
      await until(() => waiter.reads() >= reads)
      return answer
    }
    return { waiter, waiting: () => waiting }
  }

  it('a process that finds the lease held waits for its holder’s answer, however many reads that takes, and does not send the token', async () => {
    const store = memoryStore()
    const { waiter, waiting } = waiterDuringHolder(store, 'rt-slow', 8)
    const held = await sharedRefresh(instance(), store, acme, 'rt-slow', NOW, 0)
    expect(await waiting()).toEqual(held)
    expect(waiter.claims()).toBe(1)
    expect(sent).toEqual(['rt-slow'])
  })

  it('a process waiting on a holder whose refresh fails (an outage) refreshes itself once the lease is given back', async () => {
    const store = memoryStore()
    const { waiting } = waiterDuringHolder(store, 'rt-outage', 4, { status: 503, json: { error: 'temporarily_unavailable' } })
    const holder = await rejectionOf(sharedRefresh(instance(), store, acme, 'rt-outage', NOW, 0), 'the holder’s refresh to fail')
    expect(holder).toMatchObject({ code: 'provider_error' })
    expect(await waiting()).toMatchObject({ access_token: 'at(rt-outage)' })
    expect(sent).toEqual(['rt-outage', 'rt-outage'])
  })

  it('a holder that finished between this process’s read and its claim is not repeated: its answer is used', async () => {
    const store = memoryStore()
    const first = await sharedRefresh(instance(), store, acme, 'rt-raced', NOW, 0)
    const late = counted(store, 1)
    expect(await sharedRefresh(instance(), late.store, acme, 'rt-raced', NOW, 0)).toEqual(first)
    expect(late.claims()).toBe(1)
    expect(sent).toEqual(['rt-raced'])
  })

  it('a token the provider refused is refused by every process without being sent again, found before or after the claim', async () => {
    const store = memoryStore()
    before = async () => ({ status: 400, json: { error: 'invalid_grant', error_description: 'refresh token revoked' } })
    expect(await rejectionOf(sharedRefresh(instance(), store, acme, 'rt-revoked', NOW, 0), 'a refusal')).toMatchObject({ code: 'invalid_grant' })

    for (const hideUsed of [0, 1]) {
      const other = counted(store, hideUsed)
      const error = await rejectionOf(sharedRefresh(instance(), other.store, acme, 'rt-revoked', NOW, 0), 'a refusal')
      expect(error).toBeInstanceOf(RefreshAccessTokenError)
      expect(error).toMatchObject({ code: 'invalid_grant', provider: 'acme', message: refusedMessage })
    }
    expect(sent).toEqual(['rt-revoked'])
  })

  it('gives up with provider_error after five lost claims, without sending the token', async () => {
    // Another process claims the lease first every time and leaves neither an answer nor its lease behind.
    const store: SessionStore = { ...memoryStore(), get: async () => null, claim: async () => false }
    const watch = counted(store)
    const error = await rejectionOf(sharedRefresh(instance(), watch.store, acme, 'rt-contended', NOW, 0), 'the refresh to give up')
    expect(error).toMatchObject({
      code: 'provider_error',
      provider: 'acme',
      message: 'getAccessToken(): the "acme" refresh token kept being claimed by other processes under 5 attempts; try again.',
    })
    expect(watch.claims()).toBe(5)
    expect(sent).toEqual([])
  })
})

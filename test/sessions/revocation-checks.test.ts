/**
 * How one process checks JWT sessions against the store (src/session/revocation.ts), as a unit with
 * the memory store and a clock of its own: what it answers from memory and when it asks the store,
 * what it forgets after a change, after a long silence or past its bound, an answer that arrives
 * after a change, a store failure, tokens without a session id, and what a device is recognised by.
 * The same rules across instances and real stores: test/sessions/revocation.test.ts.
 */
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { describe, expect, it } from '@jest/globals'
import type { JWT } from 'portcullis'
import { encode } from 'portcullis/jwt'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import { clientDetails, forgetChecks, sessionIdOf, sessionStands } from '../../src/session/revocation.js'
import { signedInUserId } from '../../src/session/strategy.js'
import { CHANGES_RETENTION_MS, type SessionState, type SessionStore } from '../../src/session/store/types.js'
import { SECRET } from '../support/flow.js'
import { silentLogger } from '../support/oauth-app.js'

const T = Date.now()
const CACHE_MS = 5000
const HOUR = 3_600_000

interface Rig {
  readonly config: ReturnType<typeof resolveConfig>
  /** The config's memory store. */
  readonly store: SessionStore
  /** The same store as sessionStands sees it: each sessionStates call counted, and held while `hold()` is on. */
  readonly seen: SessionStore
  /** How many sessionStates calls (store round trips for answers) so far. */
  asks(): number
  /** Holds the next answers back until the returned function is called; resolves `asked` when the first is asked. */
  hold(): { asked: Promise<void>; release(): void }
}

/** A fresh process's checks (they are kept per config) over a fresh memory store. */
function rig(): Rig {
  const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers: [], session: { strategy: 'jwt', store: 'memory', revocationCacheSeconds: CACHE_MS / 1000 } }, FEATURES)
  const store = config.session.store!
  let asks = 0
  let held: { gate: Promise<void>; onAsked: () => void } | undefined
  const seen: SessionStore = {
    ...store,
    async sessionStates(asked): Promise<SessionState[]> {
      asks++
      // The answer as the store gives it now; delivered when the test lets it through.
      const answer = await store.sessionStates(asked)
      if (held) {
        held.onAsked()
        await held.gate
      }
      return answer
    },
  }
  return {
    config,
    store,
    seen,
    asks: () => asks,
    hold() {
      let release!: () => void
      let onAsked!: () => void
      const asked = new Promise<void>((resolve) => (onAsked = resolve))
      held = { gate: new Promise<void>((resolve) => (release = resolve)), onAsked }
      return { asked, release: () => ((held = undefined), release()) }
    },
  }
}

/** Stores a session of `userId` with id `sid`, living an hour from T unless `expires` says otherwise. */
async function session(store: SessionStore, sid: string, userId = 'alice', expires = T + HOUR): Promise<JWT> {
  await store.createSession({ id: sid, userId, createdAt: T, lastSeenAt: T, expires, ipAddress: null, userAgent: null })
  return { sub: userId, sid, iat: Math.floor(T / 1000) }
}

/** True when the answer came from memory (no await): the common case of a warm session. */
const fromMemory = (answer: boolean | Promise<boolean>): boolean => typeof answer === 'boolean'

describe('sessionIdOf', () => {
  it('takes a session id of 1 to 64 characters, nothing else', () => {
    expect(sessionIdOf({ sid: 'a' })).toBe('a')
    expect(sessionIdOf({ sid: 'a'.repeat(64) })).toBe('a'.repeat(64))
    for (const sid of ['', 'a'.repeat(65), 42, null, ['a']]) expect(sessionIdOf({ sid })).toBeUndefined()
  })
})

describe('sessionStands', () => {
  it('asks the store once per session, then answers from memory; a poll without changes keeps what it knew', async () => {
    const { config, store, seen, asks } = rig()
    const token = await session(store, 's1')
    expect(await sessionStands(config, seen, token, T)).toBe(true)
    expect(asks()).toBe(1)
    const warm = sessionStands(config, seen, token, T + CACHE_MS - 1)
    expect(fromMemory(warm)).toBe(true)
    expect(warm).toBe(true)
    // Past revocationCacheSeconds the store's changes are polled, not the session.
    expect(await sessionStands(config, seen, token, T + CACHE_MS)).toBe(true)
    expect(await sessionStands(config, seen, token, T + 60_000)).toBe(true)
    expect(asks()).toBe(1)
  })

  it('refuses a session whose record expires at the moment of the read', async () => {
    const { config, store, seen } = rig()
    const token = await session(store, 's1', 'alice', T + 60_000)
    expect(await sessionStands(config, seen, token, T + 60_000)).toBe(false)
  })

  it('lets a token without session id in unless it was issued before the user’s “valid after” time', async () => {
    const validAfter = (Math.floor(T / 1000) + 10) * 1000
    const read = async (iat: number) => {
      const { config, store, seen } = rig()
      await store.setValidAfter('alice', validAfter, HOUR)
      return sessionStands(config, seen, { sub: 'alice', iat }, T)
    }
    expect(await read(validAfter / 1000)).toBe(true)
    expect(await read(validAfter / 1000 + 1)).toBe(true)
    expect(await read(validAfter / 1000 - 1)).toBe(false)
    const { config, seen } = rig()
    expect(await sessionStands(config, seen, { sub: 'alice' }, T)).toBe(true)
  })

  it('answers each token without session id by its own issue time: a newer one standing does not let an older copy in', async () => {
    const { config, store, seen } = rig()
    const validAfter = (Math.floor(T / 1000) + 10) * 1000
    await store.setValidAfter('alice', validAfter, HOUR)
    expect(await sessionStands(config, seen, { sub: 'alice', iat: validAfter / 1000 + 5 }, T)).toBe(true)
    expect(await sessionStands(config, seen, { sub: 'alice', iat: validAfter / 1000 - 5 }, T + 1)).toBe(false)
    expect(await sessionStands(config, seen, { sub: 'alice', iat: validAfter / 1000 + 5 }, T + 2)).toBe(true)
  })

  it('answers tokens without session id per user', async () => {
    const { config, store, seen } = rig()
    const iat = Math.floor(T / 1000)
    await store.setValidAfter('alice', (iat + 10) * 1000, HOUR)
    expect(await sessionStands(config, seen, { sub: 'alice', iat }, T)).toBe(false)
    expect(await sessionStands(config, seen, { sub: 'bob', iat }, T + 1)).toBe(true)
  })

  it('drops what it knew of a user’s sessions when the store names the user, and only of that user', async () => {
    const { config, store, seen, asks } = rig()
    const alice = await session(store, 's1', 'alice')
    const bob = await session(store, 's2', 'bob')
    expect(await sessionStands(config, seen, alice, T)).toBe(true)
    expect(await sessionStands(config, seen, bob, T)).toBe(true)
    expect(asks()).toBe(2)
    await store.setValidAfter('bob', T, HOUR)
    // The next poll names bob: his session is asked again, alice's still answered from memory.
    expect(await sessionStands(config, seen, alice, T + CACHE_MS)).toBe(true)
    expect(asks()).toBe(2)
    expect(await sessionStands(config, seen, bob, T + CACHE_MS)).toBe(true)
    expect(asks()).toBe(3)
  })

  it('does not keep an answer that was on its way while the session ended', async () => {
    const { config, store, seen, asks, hold } = rig()
    const token = await session(store, 's1')
    const held = hold()
    const first = sessionStands(config, seen, token, T)
    await held.asked
    await store.deleteSessions('alice', { only: 's1' })
    forgetChecks(config, ['s1'])
    held.release()
    // The read already under way gets the store's answer from before the sign-out ...
    expect(await first).toBe(true)
    // ... but the next one asks again and is refused.
    expect(await sessionStands(config, seen, token, T + 1)).toBe(false)
    expect(asks()).toBe(2)
  })

  it('keeps an answer that was on its way while a poll found no change', async () => {
    const { config, store, seen, asks, hold } = rig()
    const token = await session(store, 's1')
    const other = await session(store, 's2', 'bob')
    const held = hold()
    const first = sessionStands(config, seen, token, T)
    await held.asked
    // Another session's read polls meanwhile (nothing ended) and asks for its own session.
    const second = sessionStands(config, seen, other, T + CACHE_MS)
    held.release()
    expect(await first).toBe(true)
    expect(await second).toBe(true)
    expect(asks()).toBe(2)
    expect(fromMemory(sessionStands(config, seen, token, T + CACHE_MS + 1))).toBe(true)
  })

  it('forgets everything after a silence of half the store’s change retention, and nothing before', async () => {
    const { config, store, seen, asks } = rig()
    const token = await session(store, 's1')
    const half = CHANGES_RETENTION_MS / 2
    expect(await sessionStands(config, seen, token, T)).toBe(true)
    expect(await sessionStands(config, seen, token, T + half)).toBe(true)
    expect(asks()).toBe(1)
    // Some changes may be gone from the store by now: the session is asked again.
    expect(await sessionStands(config, seen, token, T + 2 * half + 1)).toBe(true)
    expect(asks()).toBe(2)
  })

  it('fails every read waiting on a store answer that fails', async () => {
    const { config, store } = rig()
    const down: SessionStore = { ...store, sessionStates: () => Promise.reject(new Error('store down')) }
    const reads = [sessionStands(config, down, { sub: 'alice', sid: 's1' }, T), sessionStands(config, down, { sub: 'bob', sid: 's2' }, T)]
    for (const read of reads) await expect(read).rejects.toThrow('store down')
  })

  it('keeps the answers of at most 50,000 sessions, forgetting the oldest first', async () => {
    const { config, seen, asks } = rig()
    const iat = Math.floor(T / 1000)
    const user = (i: number): JWT => ({ sub: `user-${i}`, iat })
    expect((await Promise.all(Array.from({ length: 50_000 }, (_, i) => sessionStands(config, seen, user(i), T)))).every(Boolean)).toBe(true)
    expect(fromMemory(sessionStands(config, seen, user(0), T + 1))).toBe(true)
    expect(await sessionStands(config, seen, user(50_000), T + 1)).toBe(true)
    expect(fromMemory(sessionStands(config, seen, user(1), T + 2))).toBe(true)
    const before = asks()
    expect(await sessionStands(config, seen, user(0), T + 2)).toBe(true)
    expect(asks()).toBe(before + 1)
  })
})

describe('forgetChecks', () => {
  it('forgets the named sessions, or every session of the named user, and nothing else', async () => {
    const { config, store, seen } = rig()
    const alice = [await session(store, 'a1', 'alice'), await session(store, 'a2', 'alice')]
    const bob = await session(store, 'b1', 'bob')
    for (const token of [...alice, bob]) await sessionStands(config, seen, token, T)
    forgetChecks(config, ['a1'])
    expect([...alice, bob].map((token) => fromMemory(sessionStands(config, seen, token, T + 1)))).toEqual([false, true, true])
    forgetChecks(config, [], 'alice')
    expect([...alice, bob].map((token) => fromMemory(sessionStands(config, seen, token, T + 2)))).toEqual([false, false, true])
  })
})

describe('signedInUserId (whom an account or a passkey would be linked to)', () => {
  it('asks the store again once revocationCacheSeconds have passed: a session ended meanwhile by another instance links nothing', async () => {
    const { config, store } = rig()
    const cookieSet = config.cookieSets.insecure
    const name = cookieSet.cookies.sessionToken.name
    const requestCookies = { [name]: await encode({ token: await session(store, 'linking'), secret: SECRET, salt: name }) }
    const at = (ms: number) => signedInUserId({ config, cookieSet, requestCookies, now: Math.floor(ms / 1000) })
    expect(await at(T)).toBe('alice')
    // Ended on another instance: this one's answer from memory holds until its next poll.
    await store.deleteSessions('alice', { only: 'linking' })
    expect(await at(T + CACHE_MS + 1000)).toBeNull()
  })
})

describe('clientDetails', () => {
  function requestFrom(remoteAddress: string | undefined, headers: Record<string, string> = {}, ip?: unknown): IncomingMessage {
    const socket = new Socket()
    Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress })
    const req = new IncomingMessage(socket)
    Object.assign(req.headers, headers)
    if (ip !== undefined) (req as { ip?: unknown }).ip = ip
    return req
  }

  it('takes Express’s req.ip (it follows trust proxy), else the socket’s peer', () => {
    expect(clientDetails(requestFrom('10.0.0.1', {}, '198.51.100.7')).ipAddress).toBe('198.51.100.7')
    expect(clientDetails(requestFrom('10.0.0.1', {}, '')).ipAddress).toBe('10.0.0.1')
    expect(clientDetails(requestFrom('10.0.0.1', {}, 42)).ipAddress).toBe('10.0.0.1')
    expect(clientDetails(requestFrom('10.0.0.1')).ipAddress).toBe('10.0.0.1')
  })

  it('shows an IPv4 client on a dual-stack socket as IPv4, and leaves IPv6 addresses alone', () => {
    expect(clientDetails(requestFrom('::ffff:192.168.10.20')).ipAddress).toBe('192.168.10.20')
    expect(clientDetails(requestFrom('2001:db8::ffff:192.168.10.20')).ipAddress).toBe('2001:db8::ffff:192.168.10.20')
    expect(clientDetails(requestFrom('::ffff:c0a8:a14')).ipAddress).toBe('::ffff:c0a8:a14')
  })

  it('keeps at most 64 characters of the address and 512 of the user agent', () => {
    const details = clientDetails(requestFrom(undefined, { 'user-agent': 'u'.repeat(600) }, 'a'.repeat(100)))
    expect(details).toEqual({ ipAddress: 'a'.repeat(64), userAgent: 'u'.repeat(512) })
    expect(clientDetails(requestFrom('10.0.0.1', { 'user-agent': 'Firefox' })).userAgent).toBe('Firefox')
  })

  it('gives null for what the request does not tell, and for no request', () => {
    expect(clientDetails(requestFrom(undefined, { 'user-agent': '' }))).toEqual({ ipAddress: null, userAgent: null })
    expect(clientDetails({ headers: {} } as IncomingMessage)).toEqual({ ipAddress: null, userAgent: null })
    expect(clientDetails(undefined)).toEqual({ ipAddress: null, userAgent: null })
  })
})

/**
 * The cache of opened session tokens (`jwt.cacheSize`): a cookie read moments ago is not decrypted
 * again, but an expired token is still refused, a mutated token or session never reaches the next
 * request, a bad cookie is never cached, and the cache stays within its bound.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { InvalidConfigurationError } from 'portcullis'
import { deriveKeyRing } from 'portcullis/session/keys'
import { sealSessionToken } from 'portcullis/session/token'
import { cachedTokenCount, openCachedSessionToken, ownClaims, tagFingerprint } from 'portcullis/session/token-cache'
import type { JWT } from 'portcullis'
import { SECRET, credentialsProvider, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

const NOW = 1_800_000_000

function freshRing() {
  // A ring of its own per test: the cache is keyed by ring.
  return deriveKeyRing([`${SECRET}-${Math.random()}`], 'authjs.session-token')
}

/** Opens `sealed` twice, as a browser's first two requests do: the second read caches it. */
function openTwice(sealed: string, ring: ReturnType<typeof freshRing>, size = 10) {
  openCachedSessionToken(sealed, ring, NOW, size)
  return openCachedSessionToken(sealed, ring, NOW, size)
}

describe('openCachedSessionToken', () => {
  it('caches a token the second time it opens, not the first', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    const first = openCachedSessionToken(sealed, ring, NOW, 10)
    expect(first?.payload.sub).toBe('u1')
    expect(first?.shared).toBeUndefined()
    expect(cachedTokenCount(ring)).toBe(0)
    const second = openCachedSessionToken(sealed, ring, NOW, 10)
    expect(second?.shared).toBe(true)
    expect(cachedTokenCount(ring)).toBe(1)
    // From then on the same entry, without decrypting.
    expect(openCachedSessionToken(sealed, ring, NOW, 10)).toBe(second)
  })

  it('refuses an expired token from the cache, and drops it', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    expect(openTwice(sealed, ring)?.payload.sub).toBe('u1')
    expect(cachedTokenCount(ring)).toBe(1)
    // Within the 15 s clock tolerance after exp: still valid, served from the cache.
    expect(openCachedSessionToken(sealed, ring, NOW + 60 + 14, 10)?.payload.sub).toBe('u1')
    expect(openCachedSessionToken(sealed, ring, NOW + 60 + 15, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(0)
  })

  it('refuses a token whose nbf is still ahead, from the cache as on a first read, to the second of the clock tolerance', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1', nbf: NOW + 100 }, ring.current, 600, NOW)
    expect(openCachedSessionToken(sealed, ring, NOW + 200, 10)?.payload.sub).toBe('u1')
    const cached = openCachedSessionToken(sealed, ring, NOW + 200, 10)
    expect(cached?.shared).toBe(true)
    // Served from the cache while nbf is past, or within the 15 s tolerance…
    expect(openCachedSessionToken(sealed, ring, NOW + 200, 10)).toBe(cached)
    expect(openCachedSessionToken(sealed, ring, NOW + 100 - 15, 10)).toBe(cached)
    // …and refused one second earlier, as a first read refuses it.
    expect(openCachedSessionToken(sealed, ring, NOW + 100 - 16, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(0)
  })

  it('remembers a token opened once among the last 2 × size such tokens only, so a second read later is not cached', () => {
    const ring = freshRing()
    const size = 5
    const once = () => sealSessionToken({ sub: `once-${Math.random()}` }, ring.current, 600, NOW)
    const early = once()
    openCachedSessionToken(early, ring, NOW, size)
    for (let i = 0; i < 2 * size - 1; i++) openCachedSessionToken(once(), ring, NOW, size)
    // 2 × size − 1 others since: still remembered, so this second read caches it.
    expect(openCachedSessionToken(early, ring, NOW, size)?.shared).toBe(true)
    // (One more first, so that this one's place in the ring of remembered fingerprints is not the first.)
    openCachedSessionToken(once(), ring, NOW, size)
    const late = once()
    openCachedSessionToken(late, ring, NOW, size)
    for (let i = 0; i < 2 * size; i++) openCachedSessionToken(once(), ring, NOW, size)
    // 2 × size others since: forgotten, so this read is a first one again.
    expect(openCachedSessionToken(late, ring, NOW, size)?.shared).toBeUndefined()
    expect(openCachedSessionToken(late, ring, NOW, size)?.shared).toBe(true)
    expect(cachedTokenCount(ring)).toBe(2)
  })

  it('gives tags a fingerprint of their own whatever two neighbouring characters of the first five differ', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const rest = 'Q'.repeat(38)
    // Every pair of values at each two neighbouring places of the five: where the characters' codes
    // were folded together, each overlapped its neighbour by a bit and the first lost its top one
    // ('0' and 'p' first gave one print), so the 30 bits held far fewer values than 2^30.
    for (let place = 0; place < 4; place++) {
      const prints = new Set<number>()
      for (const a of alphabet) {
        for (const b of alphabet) {
          const tag = `${'A'.repeat(place)}${a}${b}${'A'.repeat(3 - place)}${rest}`
          prints.add(tagFingerprint(`eyJ..${'i'.repeat(22)}.${'c'.repeat(64)}.${tag}`))
        }
      }
      expect(prints.size).toBe(64 * 64)
    }
  })

  it('a token whose tag shares a cached one\'s fingerprint takes its place, and comes in at the young end like any new token', () => {
    const ring = freshRing()
    const size = 3
    // Two genuine tokens whose tags begin alike (the fingerprint is made of the first 5 characters):
    // about 2^15 tokens are sealed before two collide.
    const byStart = new Map<string, string>()
    let pair: [string, string] | undefined
    for (let i = 0; pair === undefined && i < 400_000; i++) {
      const sealed = sealSessionToken({ sub: `t${i}` }, ring.current, 600, NOW)
      const start = sealed.slice(sealed.lastIndexOf('.') + 1).slice(0, 5)
      const other = byStart.get(start)
      if (other !== undefined) pair = [other, sealed]
      else byStart.set(start, sealed)
    }
    const [a, x] = pair!
    const [b, c, d] = ['b', 'c', 'd'].map((sub) => sealSessionToken({ sub }, ring.current, 600, NOW))
    openTwice(a, ring, size)
    openTwice(b!, ring, size)
    const xEntry = openTwice(x, ring, size)
    expect(xEntry?.shared).toBe(true)
    expect(cachedTokenCount(ring)).toBe(2)
    // a is gone (its fingerprint is x's now); b is older than x, so the next two tokens evict b, not x.
    expect(openCachedSessionToken(a, ring, NOW, size)?.shared).toBeUndefined()
    openTwice(c!, ring, size)
    openTwice(d!, ring, size)
    expect(openCachedSessionToken(x, ring, NOW, size)).toBe(xEntry)
    expect(openCachedSessionToken(b!, ring, NOW, size)?.shared).toBeUndefined()
  })

  it('hands out its claims frozen all the way down, and a copy of their own to callers that change them', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1', prefs: { theme: 'light', tags: ['a'] } }, ring.current, 60, NOW)
    const first = openTwice(sealed, ring)!
    expect(() => {
      ;(first.payload as JWT).sub = 'mallory'
    }).toThrow(TypeError)
    expect(() => {
      ;(first.payload.prefs as { theme: string }).theme = 'dark'
    }).toThrow(TypeError)
    expect(() => (first.payload.prefs as { tags: string[] }).tags.push('b')).toThrow(TypeError)
    const own = ownClaims(openCachedSessionToken(sealed, ring, NOW, 10)!)
    own.sub = 'mallory'
    ;(own.prefs as { theme: string }).theme = 'dark'
    expect(openCachedSessionToken(sealed, ring, NOW, 10)!.payload).toEqual({ sub: 'u1', prefs: { theme: 'light', tags: ['a'] }, iat: NOW, exp: NOW + 60, jti: expect.any(String) })
  })

  it('keys entries by the tag but answers only the exact cookie: the tag on other parts is decrypted, refused, and evicts nothing', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    const other = sealSessionToken({ sub: 'u2' }, ring.current, 60, NOW)
    expect(openTwice(sealed, ring)?.payload.sub).toBe('u1')
    // Another token's header, IV and ciphertext under the cached token's tag.
    const grafted = `${other.slice(0, other.lastIndexOf('.'))}${sealed.slice(sealed.lastIndexOf('.'))}`
    expect(openCachedSessionToken(grafted, ring, NOW, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(1)
    expect(openCachedSessionToken(sealed, ring, NOW, 10)?.payload.sub).toBe('u1')
  })

  it('keeps a token that is read while others come and go (approximately least recently used)', () => {
    const ring = freshRing()
    const size = 100
    const kept = sealSessionToken({ sub: 'kept' }, ring.current, 600, NOW)
    openTwice(kept, ring, size)
    // 1,000 other tokens, each read twice, pass through a cache of 100; the kept one is read every 10 of them.
    for (let i = 0; i < 1000; i++) {
      openTwice(sealSessionToken({ sub: `u${i}` }, ring.current, 600, NOW), ring, size)
      if (i % 10 === 9) expect(openCachedSessionToken(kept, ring, NOW, size)?.shared).toBe(true)
    }
    expect(cachedTokenCount(ring)).toBe(size)
    // Read again without its tag being decrypted: a copy of the tag with its last character
    // changed would miss, so prove the hit by the object handed out.
    const before = openCachedSessionToken(kept, ring, NOW, size)
    expect(openCachedSessionToken(kept, ring, NOW, size)).toBe(before)
  })

  it('gives a token read since the last eviction a second chance, and never evicts the token it makes room for', () => {
    const ring = freshRing()
    const size = 3
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((sub) => sealSessionToken({ sub }, ring.current, 600, NOW))
    const cached = new Map([a, b, c].map((sealed) => [sealed, openTwice(sealed!, ring, size)]))
    // Every entry read since it went in: the next token still gets its place (the oldest, a, goes)…
    for (const sealed of [a, b, c]) expect(openCachedSessionToken(sealed!, ring, NOW, size)).toBe(cached.get(sealed))
    const dEntry = openTwice(d!, ring, size)
    expect(dEntry?.shared).toBe(true)
    expect(openCachedSessionToken(d!, ring, NOW, size)).toBe(dEntry)
    expect(cachedTokenCount(ring)).toBe(size)
    expect(openCachedSessionToken(a!, ring, NOW, size)?.shared).toBeUndefined()
    // …and that pass left b and c unmarked. Read b again: the next token evicts c, the oldest unread.
    expect(openCachedSessionToken(b!, ring, NOW, size)).toBe(cached.get(b))
    openTwice(e!, ring, size)
    expect(openCachedSessionToken(b!, ring, NOW, size)).toBe(cached.get(b))
    expect(openCachedSessionToken(c!, ring, NOW, size)?.shared).toBeUndefined()
    expect(cachedTokenCount(ring)).toBe(size)
  })

  it('never caches a cookie that does not open', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`
    expect(openCachedSessionToken(tampered, ring, NOW, 10)).toBeNull()
    expect(openCachedSessionToken('garbage', ring, NOW, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(0)
    // A token of another secret is another ring's business: not opened, not cached here.
    expect(openCachedSessionToken(sealSessionToken({ sub: 'x' }, freshRing().current, 60, NOW), ring, NOW, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(0)
  })

  // 100 times the bound, as before with 100,000 cookies and a bound of 1,000: the same proof for a
  // tenth of the work (issue 23: this file alone took 50 s of the suite).
  it('stays within its bound under 10,000 distinct cookies, each read twice', () => {
    const ring = freshRing()
    let refused = 0
    for (let i = 0; i < 10_000; i++) {
      if (!openTwice(sealSessionToken({ sub: `u${i}` }, ring.current, 600, NOW), ring, 100)) refused++
      if (cachedTokenCount(ring) > 100) throw new Error(`over the bound at ${i}`)
    }
    expect(refused).toBe(0)
    expect(cachedTokenCount(ring)).toBe(100)
  })

  it('caches nothing for 10,000 cookies that each come once', () => {
    const ring = freshRing()
    for (let i = 0; i < 10_000; i++) expect(openCachedSessionToken(sealSessionToken({ sub: `u${i}` }, ring.current, 600, NOW), ring, NOW, 100)?.payload.sub).toBe(`u${i}`)
    // Only a chance match of a 30-bit fingerprint among the last 200 caches one (far below 1 expected here).
    expect(cachedTokenCount(ring)).toBeLessThan(5)
  })

  it('with size 0, keeps nothing: every read opens the token and hands out claims of its own', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    for (let i = 0; i < 3; i++) {
      const opened = openCachedSessionToken(sealed, ring, NOW, 0)
      expect(opened?.payload.sub).toBe('u1')
      expect(opened?.shared).toBeUndefined()
      expect(Object.isFrozen(opened?.payload)).toBe(false)
    }
    expect(cachedTokenCount(ring)).toBe(0)
  })
})

describe('through auth(req, res)', () => {
  it('does not let a jwt callback that mutates the token, or a handler that mutates req.auth, change the next request', async () => {
    const seen: unknown[] = []
    const { handlers, auth } = Portcullis({
    logger: recordingLogger(),
      secret: SECRET,
      providers: [credentialsProvider],
      callbacks: {
        jwt: ({ token }) => {
          seen.push(token.name)
          const original = { ...token }
          token.name = 'Mallory' // in place, on what the cache handed out
          return original
        },
      },
    })
    const app = express()
    app.use('/api/auth', handlers)
    app.get('/me', async (req, res) => {
      const session = await auth(req, res)
      res.json(session)
      if (session) session.user.name = 'Mallory'
    })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    seen.length = 0
    for (let i = 0; i < 3; i++) expect((await agent.get('/me').expect(200)).body.user.name).toBe('Ada Lovelace')
    expect(seen).toEqual(['Ada Lovelace', 'Ada Lovelace', 'Ada Lovelace'])
  })

  it('does not let a session callback or a session event that change the token change the next request', async () => {
    const { handlers, auth } = Portcullis({
    logger: recordingLogger(),
      secret: SECRET,
      providers: [credentialsProvider],
      callbacks: {
        session: ({ session, token }) => {
          const { name } = token
          const sawExtra = 'extra' in token
          token.name = 'Mallory' // in place, on what the read handed out
          ;(token as { extra?: string }).extra = 'planted'
          return { ...session, user: { ...session.user, name }, sawExtra } as never
        },
      },
      events: {
        session: ({ token }) => {
          if (token) token.email = 'mallory@example.com'
        },
      },
    })
    const app = express()
    app.use('/api/auth', handlers)
    app.get('/me', async (req, res) => {
      res.json(await auth(req, res))
    })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    for (let i = 0; i < 3; i++) {
      const { body } = await agent.get('/me').expect(200)
      expect(body).toMatchObject({ user: { name: 'Ada Lovelace', email: 'ada@example.com' }, sawExtra: false })
    }
  })

  // With a jwt callback (which returns the token unchanged) the read takes the path that runs app code.
  it.each([
    ['a plain read', {}],
    ['a read that runs a jwt callback', { callbacks: { jwt: ({ token }: { token: JWT }) => token } }],
  ])('answers each token’s own expires on every read, cached or not, whatever a handler did to the last one: %s', async (_name, options) => {
    const { auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], ...options })
    const now = Math.floor(Date.now() / 1000)
    const ring = deriveKeyRing([SECRET], 'authjs.session-token')
    const lifetimes = [600, 1200]
    const cookies = lifetimes.map((maxAge) => `authjs.session-token=${sealSessionToken({ sub: 'u1', name: 'Ada' }, ring.current, maxAge, now)}`)
    const app = express().get('/me', async (req, res) => {
      const session = await auth(req, res)
      res.json(session)
      if (session) session.expires = 'tampered'
    })
    // The first read opens, the second caches (and formats expires once), the third is a hit.
    for (let i = 0; i < 3; i++) {
      for (const [k, cookie] of cookies.entries()) {
        const { body } = await request(app).get('/me').set('Cookie', cookie).expect(200)
        expect(body).toEqual({ user: { id: 'u1', name: 'Ada' }, expires: new Date((now + lifetimes[k]!) * 1000).toISOString() })
      }
    }
  })

  it('rejects a jwt.cacheSize that is not a whole number', () => {
    for (const cacheSize of [-1, 1.5, Number.NaN, '10' as never]) {
      expect(() => Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], jwt: { cacheSize } })).toThrow(InvalidConfigurationError)
    }
  })
})

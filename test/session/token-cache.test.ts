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
import { cachedTokenCount, openCachedSessionToken } from 'portcullis/session/token-cache'
import { SECRET, credentialsProvider, signInWithPassword } from '../support/flow.js'

const NOW = 1_800_000_000

function freshRing() {
  // A ring of its own per test: the cache is keyed by ring.
  return deriveKeyRing([`${SECRET}-${Math.random()}`], 'authjs.session-token')
}

describe('openCachedSessionToken', () => {
  it('refuses an expired token from the cache, and drops it', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    expect(openCachedSessionToken(sealed, ring, NOW, 10)?.payload.sub).toBe('u1')
    expect(cachedTokenCount(ring)).toBe(1)
    // Within the 15 s clock tolerance after exp: still valid, served from the cache.
    expect(openCachedSessionToken(sealed, ring, NOW + 60 + 14, 10)?.payload.sub).toBe('u1')
    expect(openCachedSessionToken(sealed, ring, NOW + 60 + 15, 10)).toBeNull()
    expect(cachedTokenCount(ring)).toBe(0)
  })

  it('refuses a token whose nbf is still ahead, from the cache as on a first read', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1', nbf: NOW + 100 }, ring.current, 600, NOW)
    expect(openCachedSessionToken(sealed, ring, NOW + 200, 10)?.payload.sub).toBe('u1')
    expect(openCachedSessionToken(sealed, ring, NOW, 10)).toBeNull()
  })

  it('gives a fresh object on every read', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1', prefs: { theme: 'light' } }, ring.current, 60, NOW)
    const first = openCachedSessionToken(sealed, ring, NOW, 10)!
    ;(first.payload.prefs as { theme: string }).theme = 'dark'
    first.payload.sub = 'mallory'
    const second = openCachedSessionToken(sealed, ring, NOW, 10)!
    expect(second.payload).toMatchObject({ sub: 'u1', prefs: { theme: 'light' } })
    expect(second.payload).not.toBe(first.payload)
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

  it('stays within its bound under 100,000 distinct cookies', () => {
    const ring = freshRing()
    let refused = 0
    for (let i = 0; i < 100_000; i++) {
      if (!openCachedSessionToken(sealSessionToken({ sub: `u${i}` }, ring.current, 600, NOW), ring, NOW, 1000)) refused++
      if (cachedTokenCount(ring) > 1000) throw new Error(`over the bound at ${i}`)
    }
    expect(refused).toBe(0)
    expect(cachedTokenCount(ring)).toBe(1000)
  }, 60_000)

  it('with size 0, keeps nothing', () => {
    const ring = freshRing()
    const sealed = sealSessionToken({ sub: 'u1' }, ring.current, 60, NOW)
    expect(openCachedSessionToken(sealed, ring, NOW, 0)?.payload.sub).toBe('u1')
    expect(cachedTokenCount(ring)).toBe(0)
  })
})

describe('through auth(req, res)', () => {
  it('does not let a jwt callback that mutates the token, or a handler that mutates req.auth, change the next request', async () => {
    const seen: unknown[] = []
    const { handlers, auth } = Portcullis({
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

  it('rejects a jwt.cacheSize that is not a whole number', () => {
    for (const cacheSize of [-1, 1.5, Number.NaN, '10' as never]) {
      expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], jwt: { cacheSize } })).toThrow(InvalidConfigurationError)
    }
  })
})

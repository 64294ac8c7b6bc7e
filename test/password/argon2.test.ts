/**
 * Argon2id hashing (src/features/password/argon2.ts, hash.ts): the PHC string, RFC 9106's answer
 * (the reference implementation's test vector), a stored string read strictly (a tampered or
 * oversized one refused before any Argon2 work), scrypt, Argon2id and bcrypt hashes verified alike
 * with the rehash each asks for, the default's choice between Argon2id and scrypt, and the line said
 * at init when it falls back.
 *
 * The real engine is node:crypto's argon2 from Node 24.7 (CI's Node 24 suite, `bash
 * scripts/test-node-versions.sh 24 -- test/password/argon2.test.ts`), else the optional
 * @node-rs/argon2 (installed here as an optional dependency); the tests that need one skip where
 * neither is there, and an injected engine stands in for the rest (the bounds, the fallback).
 */
import { describe, expect, it, jest } from '@jest/globals'
import bcryptjs from 'bcryptjs'
import { availableArgon2, builtinArgon2, DEFAULT_ARGON2ID, type Argon2Engine, type Argon2Parameters } from '../../src/features/password/argon2.js'
import { argon2idHasher, argon2idHasherWith, defaultHashing, defaultPasswordHasher, scryptHasher, scryptHasherWith } from '../../src/features/password/hash.js'
import { announceHashing, type PasswordProvider } from '../../src/features/password/provider.js'
import type { LoggerInstance } from '../../src/logger.js'

const PASSWORD = 'correct horse battery staple'
const real = availableArgon2().engine
const withRealArgon2 = real ? it : it.skip
const builtin = builtinArgon2()

/** An engine that records each run and answers a tag of zeros at once (no real Argon2: the bounds and formats only). */
function recordingEngine(): Argon2Engine & { runs: Argon2Parameters[] } {
  const runs: Argon2Parameters[] = []
  const engine = (async (_password: string, _salt: Buffer, parameters: Argon2Parameters, tagLength: number) => {
    runs.push({ m: parameters.m, t: parameters.t, p: parameters.p })
    return Buffer.alloc(tagLength)
  }) as Argon2Engine & { runs: Argon2Parameters[] }
  engine.runs = runs
  return engine
}

const FAST_SCRYPT = { N: 2 ** 14, r: 8, p: 1 }

describe(`argon2idHasher (${availableArgon2().source ?? 'no engine here'})`, () => {
  withRealArgon2('stores $argon2id$v=19$m=19456,t=2,p=1$<16-byte salt>$<32-byte tag> at OWASP\'s parameters, and verifies it', async () => {
    const hasher = argon2idHasher()
    const stored = await hasher.hash(PASSWORD)
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(await hasher.verify(PASSWORD, stored)).toBe(true)
    expect(await hasher.verify('correct horse battery stapler', stored)).toBe(false)
    expect(hasher.needsRehash(stored)).toBe(false)
    const again = await hasher.hash(PASSWORD)
    expect(again.split('$')[4]).not.toBe(stored.split('$')[4])
  })

  withRealArgon2("is Argon2id itself: the reference implementation's test vector verifies", async () => {
    // phc-winner-argon2's test.c: "password", "somesalt", m = 2^16, t = 2, p = 1, version 0x13.
    const vector = '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc'
    const hasher = argon2idHasher()
    expect(await hasher.verify('password', vector)).toBe(true)
    expect(await hasher.verify('passwore', vector)).toBe(false)
    // Verified, but made with other parameters: replaced at the next sign-in.
    expect(hasher.needsRehash(vector)).toBe(true)
  })

  withRealArgon2('verifies scrypt and bcrypt hashes too, and asks to replace them', async () => {
    const hasher = argon2idHasher()
    const scrypt = await scryptHasher(FAST_SCRYPT).hash(PASSWORD)
    const bcrypt = bcryptjs.hashSync(PASSWORD, 4)
    for (const stored of [scrypt, bcrypt]) {
      expect(await hasher.verify(PASSWORD, stored)).toBe(true)
      expect(await hasher.verify('wrong password', stored)).toBe(false)
      expect(hasher.needsRehash(stored)).toBe(true)
    }
  })

  withRealArgon2('the scrypt hasher verifies an Argon2id hash where Node has Argon2, and asks to replace it', async () => {
    const stored = await argon2idHasher().hash(PASSWORD)
    const hasher = scryptHasher(FAST_SCRYPT)
    expect(await hasher.verify(PASSWORD, stored)).toBe(true)
    expect(hasher.needsRehash(stored)).toBe(true)
  })

  it('refuses parameters out of range at creation, and says where there is no Argon2', () => {
    if (real) {
      expect(() => argon2idHasher({ m: 4096 })).toThrow(/m \(KiB\) must be a whole number of at least 7168/)
      expect(() => argon2idHasher({ t: 0 })).toThrow(TypeError)
      expect(() => argon2idHasher({ m: 2 ** 19 })).toThrow(/at most 262144/)
      expect(() => argon2idHasher({ m: 2 ** 17, t: 16 })).toThrow(/m · t/)
    } else {
      expect(() => argon2idHasher()).toThrow(/no crypto\.argon2, which Node 24\.7 added, and @node-rs\/argon2 is not installed/)
    }
  })
})

describe('a stored Argon2id hash, read strictly', () => {
  const engine = recordingEngine()
  const hasher = argon2idHasherWith(DEFAULT_ARGON2ID, engine)
  const salt = Buffer.alloc(16, 7).toString('base64').replace(/=+$/, '')
  const tag = Buffer.alloc(32).toString('base64').replace(/=+$/, '')
  const phc = (parameters: string, s = salt, t = tag) => `$argon2id$v=19$${parameters}$${s}$${t}`

  it('runs the engine with the stored parameters, salt and tag length', async () => {
    engine.runs.length = 0
    expect(await hasher.verify(PASSWORD, phc('m=65536,t=3,p=2'))).toBe(true)
    expect(engine.runs).toEqual([{ m: 65536, t: 3, p: 2 }])
  })

  it.each([
    ['m above 256 MiB', phc('m=262145,t=1,p=1')],
    ['t above 16', phc('m=19456,t=17,p=1')],
    ['p above 16', phc('m=19456,t=2,p=17')],
    ['m below 8 · p', phc('m=15,t=2,p=2')],
    ['m · t above 2^20 (a day of passes on 256 MiB)', phc('m=262144,t=5,p=1')],
    ['a leading zero', phc('m=019456,t=2,p=1')],
    ['the parameters in another order', phc('t=2,m=19456,p=1')],
    ['another version', phc('m=19456,t=2,p=1').replace('v=19', 'v=16')],
    ['no version', phc('m=19456,t=2,p=1').replace('$v=19', '')],
    ['Argon2i', phc('m=19456,t=2,p=1').replace('argon2id', 'argon2i')],
    ['Argon2d', phc('m=19456,t=2,p=1').replace('argon2id', 'argon2d')],
    ['a padded salt', phc('m=19456,t=2,p=1', `${salt}==`)],
    ['a salt with stray bits', phc('m=19456,t=2,p=1', `${salt.slice(0, -1)}B`)],
    ['a salt of 4 bytes', phc('m=19456,t=2,p=1', 'AAAAAA')],
    ['a tag of 8 bytes', phc('m=19456,t=2,p=1', salt, 'AAAAAAAAAAA')],
    ['a key id field', `$argon2id$v=19$m=19456,t=2,p=1,keyid=AAAA$${salt}$${tag}`],
    ['trailing text', `${phc('m=19456,t=2,p=1')}$`],
  ])('refuses %s before any Argon2 work', async (_name, stored) => {
    engine.runs.length = 0
    expect(await hasher.verify(PASSWORD, stored)).toBe(false)
    expect(engine.runs).toEqual([])
    expect(hasher.needsRehash(stored)).toBe(true)
  })

  it('asks to rehash an Argon2id hash of other parameters, and not one of its own', async () => {
    expect(hasher.needsRehash(phc('m=19456,t=2,p=1'))).toBe(false)
    expect(hasher.needsRehash(phc('m=19456,t=3,p=1'))).toBe(true)
    expect(hasher.needsRehash(phc('m=65536,t=2,p=1'))).toBe(true)
    expect(hasher.needsRehash(phc('m=19456,t=2,p=2'))).toBe(true)
  })
})

describe('the default hashing', () => {
  it('is Argon2id at OWASP\'s parameters where an engine is at hand, and its dummy hash (for unknown users) is too', async () => {
    const engine = recordingEngine()
    const hasher = defaultPasswordHasher(engine)
    expect(await hasher.hash(PASSWORD)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(engine.runs).toEqual([{ m: 19456, t: 2, p: 1 }])
    expect(defaultHashing(engine)).toEqual({ algorithm: 'argon2id', parameters: { m: 19456, t: 2, p: 1 } })
    // A scrypt hash of before verifies, and is replaced.
    const scrypt = await scryptHasher(FAST_SCRYPT).hash(PASSWORD)
    expect(await hasher.verify(PASSWORD, scrypt)).toBe(true)
    expect(hasher.needsRehash(scrypt)).toBe(true)
  })

  it('is scrypt at N = 2^17 where there is none, and an Argon2id hash there rejects saying why (not a wrong password)', async () => {
    const hasher = defaultPasswordHasher(null)
    expect(defaultHashing(null)).toEqual({ algorithm: 'scrypt', parameters: { N: 2 ** 17, r: 8, p: 1 } })
    const stored = await scryptHasherWith(FAST_SCRYPT, undefined).hash(PASSWORD)
    expect(await hasher.verify(PASSWORD, stored)).toBe(true)
    const argon = await argon2idHasherWith(DEFAULT_ARGON2ID, recordingEngine()).hash(PASSWORD)
    await expect(hasher.verify(PASSWORD, argon)).rejects.toThrow(/Argon2id hash, and this Node\.js .* cannot verify it/)
    // Out of bounds is still just false.
    expect(await hasher.verify(PASSWORD, argon.replace('m=19456', 'm=999999'))).toBe(false)
  })

  it("is what is at hand: node:crypto's Argon2id from Node 24.7, else @node-rs/argon2 when installed, else scrypt", () => {
    expect(defaultHashing().algorithm).toBe(real ? 'argon2id' : 'scrypt')
    expect(availableArgon2().source).toBe(builtin ? 'node:crypto' : real ? '@node-rs/argon2' : undefined)
    // The optional package missing: node:crypto's where Node has it, else none (the scrypt fallback).
    expect(availableArgon2(() => false).source).toBe(builtin ? 'node:crypto' : undefined)
  })

  const withBoth = builtin && availableArgon2(() => true).engine ? it : it.skip
  withBoth('node:crypto and @node-rs/argon2 compute the same tag (Node 24.7 and later, the package installed)', async () => {
    const { argon2PackageInstalled } = await import('../../src/features/password/argon2.js')
    if (!argon2PackageInstalled()) return
    const salt = Buffer.alloc(16, 3)
    const fromNode = await builtin!(PASSWORD, salt, DEFAULT_ARGON2ID, 32)
    const { hashRaw } = (await import('@node-rs/argon2')) as unknown as { hashRaw: (p: string, o: object) => Promise<Buffer> }
    const fromPackage = await hashRaw(PASSWORD, { algorithm: 2, version: 1, memoryCost: 19456, timeCost: 2, parallelism: 1, outputLen: 32, salt })
    expect(fromPackage.equals(fromNode)).toBe(true)
  })
})

describe('the line said at init', () => {
  const provider = (hashing?: unknown) => ({ id: 'password', password: { hashing } }) as unknown as PasswordProvider
  const logger = () => ({ warn: jest.fn(), error: jest.fn(), debug: jest.fn() }) as unknown as LoggerInstance & { warn: jest.Mock }

  it('says once per process that new passwords get scrypt where Node has no Argon2', () => {
    const said = { scrypt: false }
    const first = logger()
    announceHashing(provider(), first, false, said)
    expect(first.warn).toHaveBeenCalledTimes(1)
    expect(first.warn).toHaveBeenCalledWith('PasswordHashingScrypt', expect.stringMatching(/no Argon2id here .* hashed with scrypt/))
    const second = logger()
    announceHashing(provider(), second, false, said)
    expect(second.warn).not.toHaveBeenCalled()
  })

  it('says nothing where Node has Argon2, or for the app\'s own hashing', () => {
    const quiet = logger()
    announceHashing(provider(), quiet, true, { scrypt: false })
    announceHashing(provider({ hash: () => '', verify: () => false }), quiet, false, { scrypt: false })
    expect(quiet.warn).not.toHaveBeenCalled()
  })
})

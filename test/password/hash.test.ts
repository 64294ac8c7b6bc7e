/**
 * Password hashing (src/features/password/hash.ts): scrypt hashes that round-trip, a stored string read
 * strictly (a tampered or oversized one is refused before any scrypt work), rehash decisions, and
 * bcrypt hashes imported from another app verified through bcryptjs.
 *
 * node:crypto is wrapped so each test can see which scrypt runs happened: "refused before any work"
 * is asserted on that, not on a clock.
 */
import { createRequire } from 'node:module'
import { beforeEach, describe, expect, it, jest } from '@jest/globals'
import bcryptjs from 'bcryptjs'
import type { ScryptParameters } from '../../src/features/password/hash.js'

const realCrypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')
/** The N of every scrypt run since the last reset. */
const scryptRuns: number[] = []
/** While true, scrypt is recorded and answers a key of zeros at once (to reach the bounds' edges without gigabytes and seconds). */
let skipScrypt = false
jest.unstable_mockModule('node:crypto', () => ({
  ...realCrypto,
  scrypt: (...args: Parameters<typeof realCrypto.scrypt>) => {
    scryptRuns.push((args[3] as { N: number }).N)
    if (skipScrypt) return (args[4] as (error: null, key: Buffer) => void)(null, Buffer.alloc(args[2]))
    return (realCrypto.scrypt as (...a: unknown[]) => void)(...args)
  },
}))
const { DEFAULT_SCRYPT, isBcryptHash, scryptHasher } = await import('../../src/features/password/hash.js')
const { normalizePassword } = await import('../../src/features/password/policy.js')

/** Small parameters (16 MiB, a few ms) for most tests; one test runs the defaults. */
const FAST = { N: 2 ** 14 }
const hasher = scryptHasher(FAST)
const PASSWORD = 'correct horse battery staple'
const stored = await hasher.hash(PASSWORD)

/** `stored` split into its fields: ['', 'scrypt', 'ln=14,r=8,p=1', salt, key]. */
const fields = () => stored.split('$')
const withField = (index: number, value: string) => fields().map((field, i) => (i === index ? value : field)).join('$')
/** `text` with the character at `index` swapped for another of the base64 alphabet. */
const flip = (text: string, index: number) => `${text.slice(0, index)}${text[index] === 'A' ? 'B' : 'A'}${text.slice(index + 1)}`

beforeEach(() => {
  scryptRuns.length = 0
  skipScrypt = false
})

describe('scryptHasher', () => {
  it('verifies the password a hash was made from', async () => {
    expect(await hasher.verify(PASSWORD, stored)).toBe(true)
  })

  it('refuses a wrong password', async () => {
    expect(await hasher.verify('correct horse battery stapler', stored)).toBe(false)
    expect(await hasher.verify('Correct horse battery staple', stored)).toBe(false)
    expect(await hasher.verify('', stored)).toBe(false)
  })

  it('stores $scrypt$ln=…,r=…,p=…$<16-byte salt>$<32-byte key> in unpadded base64, a fresh salt each time', async () => {
    expect(stored).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    const [, , , salt, key] = fields() as [string, string, string, string, string]
    expect(Buffer.from(salt, 'base64')).toHaveLength(16)
    expect(Buffer.from(key, 'base64')).toHaveLength(32)
    const again = await hasher.hash(PASSWORD)
    expect(again).not.toBe(stored)
    expect(again.split('$')[3]).not.toBe(salt)
    expect(await hasher.verify(PASSWORD, again)).toBe(true)
  })

  it('is scrypt itself (RFC 7914): the key is scrypt(password, salt, 32) with the stored parameters', async () => {
    const [, , , salt, key] = fields() as [string, string, string, string, string]
    const expected = realCrypto.scryptSync(PASSWORD, Buffer.from(salt, 'base64'), 32, { N: 2 ** 14, r: 8, p: 1 })
    expect(Buffer.from(key, 'base64').equals(expected)).toBe(true)
  })

  it.each([
    ['a changed salt', () => withField(3, flip(fields()[3]!, 5))],
    ['a changed key', () => withField(4, flip(fields()[4]!, 20))],
    ['another N', () => withField(2, 'ln=15,r=8,p=1')],
    ['another r', () => withField(2, 'ln=14,r=9,p=1')],
    ['another p', () => withField(2, 'ln=14,r=8,p=2')],
  ])('refuses the right password against a hash with %s', async (_what, tamper) => {
    const tampered = tamper()
    expect(tampered).not.toBe(stored)
    expect(await hasher.verify(PASSWORD, tampered)).toBe(false)
  })

  it.each([
    ['padding on the salt', () => withField(3, `${fields()[3]}==`)],
    ['padding on the key', () => withField(4, `${fields()[4]}=`)],
    ['a key one character short', () => withField(4, fields()[4]!.slice(1))],
    ['a salt one character long', () => withField(3, `A${fields()[3]}`)],
    ['stray bits in the last character of the key (a second spelling of the same key)', () => withField(4, `${fields()[4]!.slice(0, -1)}${String.fromCharCode(fields()[4]!.at(-1)!.charCodeAt(0) + 1)}`)],
    ['base64url characters', () => withField(3, fields()[3]!.replace(/^./, '-'))],
    ['a leading zero', () => withField(2, 'ln=014,r=8,p=1')],
    ['the parameters in another order', () => withField(2, 'r=8,ln=14,p=1')],
    ['an extra field', () => `${stored}$x`],
    ['something before it', () => `x${stored}`],
    ['trailing white space', () => `${stored} `],
    ['another algorithm name', () => withField(1, 'scrypt2')],
    ['an upper-case name', () => withField(1, 'SCRYPT')],
  ])('refuses, without running scrypt, a stored string with %s', async (_what, tamper) => {
    expect(await hasher.verify(PASSWORD, tamper())).toBe(false)
    expect(scryptRuns).toEqual([])
  })

  it.each([
    ['ln=10, the least N', 'ln=10,r=8,p=1'],
    ['ln=22, the most N', 'ln=22,r=1,p=1'],
    ['r=64 and p=64, the most of each', 'ln=10,r=64,p=64'],
    ['exactly 1 GiB of memory and 2^23 work (ln=20, r=8)', 'ln=20,r=8,p=1'],
  ])('runs scrypt for a stored hash at the edge of the bounds: %s', async (_what, parameters) => {
    skipScrypt = true
    expect(await hasher.verify(PASSWORD, withField(2, parameters))).toBe(false)
    expect(scryptRuns).toEqual([2 ** Number(/ln=(\d+)/.exec(parameters)![1])])
  })

  it.each([
    ['ln=30 (2^30: 128 GiB and hours)', 'ln=30,r=8,p=1'],
    ['ln=23', 'ln=23,r=1,p=1'],
    ['ln=9', 'ln=9,r=8,p=1'],
    ['r=65', 'ln=10,r=65,p=1'],
    ['p=65', 'ln=10,r=8,p=65'],
    ['more than 1 GiB of memory (ln=21, r=8: 2 GiB)', 'ln=21,r=8,p=1'],
    ['more than 2^23 work (ln=20, r=8, p=64: about 64 times a 1 GiB hash)', 'ln=20,r=8,p=64'],
  ])('refuses a stored hash asking for %s before running scrypt', async (_what, parameters) => {
    expect(await hasher.verify(PASSWORD, withField(2, parameters))).toBe(false)
    expect(scryptRuns).toEqual([])
  })

  it('verifies a hash made with other parameters within bounds (after a parameter change)', async () => {
    const older = await scryptHasher({ N: 2 ** 14, r: 4 }).hash(PASSWORD)
    scryptRuns.length = 0
    expect(await hasher.verify(PASSWORD, older)).toBe(true)
    expect(scryptRuns).toEqual([2 ** 14])
  })

  it('answers false, not an exception, for what is not a hash', async () => {
    for (const value of ['', 'hunter2', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA', null, undefined, 42]) {
      await expect(hasher.verify(PASSWORD, value as string)).resolves.toBe(false)
    }
  })

  it('throws a TypeError when the password is not a string (a programming error)', async () => {
    await expect(hasher.verify(['an', 'array'] as unknown as string, stored)).rejects.toThrow(TypeError)
    await expect(hasher.verify(['an', 'array'] as unknown as string, stored)).rejects.toThrow('PasswordHasher.verify: the password must be a string')
    await expect(hasher.hash(undefined as unknown as string)).rejects.toThrow(TypeError)
    await expect(hasher.hash(undefined as unknown as string)).rejects.toThrow('PasswordHasher.hash: the password must be a string')
  })
})

describe('needsRehash', () => {
  it('is false for a hash with exactly the hasher’s parameters', () => {
    expect(hasher.needsRehash(stored)).toBe(false)
  })

  it('is true once N (or r or p) changes', () => {
    expect(scryptHasher({ N: 2 ** 15 }).needsRehash(stored)).toBe(true)
    expect(scryptHasher({ N: 2 ** 14, r: 16 }).needsRehash(stored)).toBe(true)
    expect(scryptHasher({ N: 2 ** 14, p: 2 }).needsRehash(stored)).toBe(true)
  })

  it('is true for bcrypt and for anything unreadable', () => {
    expect(hasher.needsRehash(bcryptjs.hashSync('x', 4))).toBe(true)
    expect(hasher.needsRehash('')).toBe(true)
    expect(hasher.needsRehash(`${stored}=`)).toBe(true)
  })
})

describe('parameters', () => {
  it('defaults to the OWASP minimum for scrypt: N = 2^17, r = 8, p = 1', async () => {
    expect(DEFAULT_SCRYPT).toEqual({ N: 2 ** 17, r: 8, p: 1 })
    const defaults = scryptHasher()
    const hash = await defaults.hash(PASSWORD)
    expect(hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$/)
    expect(await defaults.verify(PASSWORD, hash)).toBe(true)
    expect(await defaults.verify(`${PASSWORD}!`, hash)).toBe(false)
    expect(defaults.needsRehash(hash)).toBe(false)
    expect(defaults.needsRehash(stored)).toBe(true)
  })

  it.each([
    ['N not a power of two', { N: 20_000 }, /power of two/],
    ['N below 2^14', { N: 2 ** 13 }, /at least 2\^14/],
    ['N not a number', { N: '16384' as unknown as number }, /power of two/],
    ['parameters that are no object', 16384 as unknown as object, /parameters must be an object/],
    ['null parameters', null as unknown as object, /parameters must be an object/],
    ['r of 0', { r: 0 }, /r must be/],
    ['p of 0', { p: 0 }, /p must be/],
    ['p of 1.5', { p: 1.5 }, /p must be/],
    ['r above 64', { N: 2 ** 14, r: 65 }, /r must be at most 64/],
    ['more memory than verify accepts (N = 2^21, r = 8: 2 GiB)', { N: 2 ** 21 }, /memory/],
    ['more work than verify accepts (N = 2^20, r = 8, p = 2)', { N: 2 ** 20, p: 2 }, /work one hash takes/],
  ])('throws a TypeError for %s', (_what, parameters, message) => {
    expect(() => scryptHasher(parameters as Partial<ScryptParameters>)).toThrow(TypeError)
    expect(() => scryptHasher(parameters as Partial<ScryptParameters>)).toThrow(message)
  })

  it('accepts parameters at the bounds: r = 1 and p = 1, and N = 2^20 with r = 8 (exactly 1 GiB and 2^23 work)', () => {
    expect(() => scryptHasher({ N: 2 ** 14, r: 1, p: 1 })).not.toThrow()
    expect(() => scryptHasher({ N: 2 ** 20, r: 8 })).not.toThrow()
  })
})

describe('Unicode', () => {
  it.each([
    ['the ﬁ ligature', 'ﬁrewall dragon 42', 'firewall dragon 42'],
    ['full-width digits', 'tiger lily １２３４', 'tiger lily 1234'],
    ['é precomposed and e + U+0301', 'caf\u00e9 au lait', 'cafe\u0301 au lait'],
  ])('verifies a password typed with %s against the hash of the other form, once normalised', async (_what, typed, registered) => {
    expect(typed).not.toBe(registered)
    const one = normalizePassword(typed, 256)!
    const other = normalizePassword(registered, 256)!
    expect(one).toBe(other)
    expect(await hasher.verify(one, await hasher.hash(other))).toBe(true)
  })
})

describe('bcrypt hashes imported from another app', () => {
  const imported = bcryptjs.hashSync('correct horse', 10)

  it('recognises $2a$, $2b$ and $2y$ and nothing else', () => {
    const rest = imported.slice(3)
    expect(isBcryptHash(imported)).toBe(true)
    for (const version of ['2a', '2b', '2y']) expect(isBcryptHash(`$${version}${rest}`)).toBe(true)
    for (const other of [`$2x${rest}`, `$2${rest}`, `${imported}x`, `x${imported}`, imported.slice(0, -1), stored, '']) expect(isBcryptHash(other)).toBe(false)
    // Costs 04 to 31, two digits.
    for (const cost of ['04', '09', '10', '29', '30', '31']) expect(isBcryptHash(`$2b$${cost}$${imported.slice(7)}`)).toBe(true)
    for (const cost of ['00', '03', '32', '39', '4', '100']) expect(isBcryptHash(`$2b$${cost}$${imported.slice(7)}`)).toBe(false)
    // Not a string holding one (an array would be turned into its text by a regular expression).
    expect(isBcryptHash([imported] as unknown as string)).toBe(false)
  })

  it('verifies the right password and refuses a wrong one (bcryptjs.hashSync)', async () => {
    expect(await hasher.verify('correct horse', imported)).toBe(true)
    expect(await hasher.verify('correct horsE', imported)).toBe(false)
    expect(await hasher.verify('correct horse battery staple', imported)).toBe(false)
    expect(scryptRuns).toEqual([])
  })

  it('verifies a $2y$ hash (PHP’s spelling of the same algorithm)', async () => {
    expect(await hasher.verify('correct horse', `$2y$${imported.slice(4)}`)).toBe(true)
  })

  it('refuses a hash of a cost above 16 without running it (cost 31 would take days)', async () => {
    expect(await hasher.verify('correct horse', `$2b$31$${imported.slice(7)}`)).toBe(false)
    expect(await hasher.verify('correct horse', `$2b$17$${imported.slice(7)}`)).toBe(false)
  })

  it('says to npm install bcryptjs when a bcrypt hash is met and bcryptjs is not installed', async () => {
    await jest.isolateModulesAsync(async () => {
      jest.unstable_mockModule('bcryptjs', () => {
        throw Object.assign(new Error("Cannot find package 'bcryptjs'"), { code: 'ERR_MODULE_NOT_FOUND' })
      })
      const isolated = await import('../../src/features/password/hash.js')
      const without = isolated.scryptHasher(FAST)
      await expect(without.verify('correct horse', imported)).rejects.toThrow('npm install bcryptjs')
      // Everything else works without it.
      expect(await without.verify(PASSWORD, stored)).toBe(true)
      expect(await without.verify('correct horse', 'not a hash')).toBe(false)
    })
  })

  /** A hasher of a fresh copy of hash.ts that loads `bcryptjs` as `factory` makes it. */
  async function withBcryptjs<T>(factory: () => unknown, use: (hasher: ReturnType<typeof scryptHasher>) => Promise<T>): Promise<T> {
    let result: T | undefined
    await jest.isolateModulesAsync(async () => {
      jest.unstable_mockModule('bcryptjs', factory as () => Record<string, unknown>)
      result = await use((await import('../../src/features/password/hash.js')).scryptHasher(FAST))
    })
    return result!
  }

  it('runs bcrypt for a cost of 16, the most it verifies, through bcryptjs 2 (default export) or 3 (named export)', async () => {
    const calls: string[] = []
    const compare = async (_password: string, hash: string) => (calls.push(hash.slice(0, 7)), true)
    expect(await withBcryptjs(() => ({ default: { compare } }), (hasher) => hasher.verify('correct horse', `$2b$16$${imported.slice(7)}`))).toBe(true)
    expect(await withBcryptjs(() => ({ compare, default: undefined }), (hasher) => hasher.verify('correct horse', `$2b$16$${imported.slice(7)}`))).toBe(true)
    expect(await withBcryptjs(() => ({ default: { compare } }), (hasher) => hasher.verify('correct horse', `$2b$17$${imported.slice(7)}`))).toBe(false)
    expect(calls).toEqual(['$2b$16$', '$2b$16$'])
  })

  it('says which bcryptjs to install when the installed one has no compare(), and passes on an error of loading it other than its absence', async () => {
    await expect(withBcryptjs(() => ({ default: { hash: () => '' } }), (hasher) => hasher.verify('correct horse', imported))).rejects.toThrow('no compare(): install bcryptjs 2.4 or 3')
    // CommonJS's code for a missing package is MODULE_NOT_FOUND: the same advice.
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'bcryptjs'"), { code: 'MODULE_NOT_FOUND' })
    }
    await expect(withBcryptjs(missing, (hasher) => hasher.verify('correct horse', imported))).rejects.toThrow('npm install bcryptjs')
    const broken = () => {
      throw new SyntaxError('Unexpected token in bcryptjs')
    }
    const error = await withBcryptjs(broken, (hasher) => hasher.verify('correct horse', imported).then(() => undefined, (thrown: unknown) => thrown))
    expect(error).toBeInstanceOf(SyntaxError)
    expect((error as Error).message).toBe('Unexpected token in bcryptjs')
  })
})

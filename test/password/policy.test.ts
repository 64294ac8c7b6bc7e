/**
 * The password policy (src/features/password/policy.ts), after NIST SP 800-63B: NFKC normalisation with an
 * input bound checked first, length in code points, the common-password list (a data file,
 * src/features/password/common-passwords.txt, read on first use only) and the breach hook. No composition rules.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { commonPasswordSet, readCommonPasswords } from '../../src/features/password/common-passwords.js'
import { DEFAULT_PASSWORD_POLICY, checkPassword, normalizePassword, type PasswordPolicy } from '../../src/features/password/policy.js'

afterEach(() => {
  jest.restoreAllMocks()
})

/** Not on any list, no pattern: a random string of `length` ASCII characters. */
const randomPassword = (length: number) => randomBytes(length).toString('base64url').slice(0, length)

describe('DEFAULT_PASSWORD_POLICY', () => {
  it('is 8 to 256 characters, without a breach check, and frozen', () => {
    expect(DEFAULT_PASSWORD_POLICY).toEqual({ minLength: 8, maxLength: 256 })
    expect(Object.isFrozen(DEFAULT_PASSWORD_POLICY)).toBe(true)
  })
})

describe('normalizePassword', () => {
  it.each([
    ['the ﬁ ligature', 'ﬁrewall', 'firewall'],
    ['full-width letters and digits', 'ｐａｓｓ１２３４', 'pass1234'],
    ['e + U+0301', 'cafe\u0301', 'caf\u00e9'],
    ['a non-breaking space', 'two\u00a0words', 'two words'],
  ])('returns the NFKC form: %s', (_what, typed, expected) => {
    expect(normalizePassword(typed, 256)).toBe(expected)
  })

  it('leaves an NFKC password as it is (spaces included: no trimming, no collapsing)', () => {
    expect(normalizePassword('  Tr0ub4dor & 3  ', 256)).toBe('  Tr0ub4dor & 3  ')
  })

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 12345678],
    ['an array of strings (a repeated form field)', ['password1', 'password2']],
    ['an object (a JSON body)', { toString: () => 'password' }],
  ])('returns null for %s', (_what, value) => {
    expect(normalizePassword(value, 256)).toBeNull()
  })

  it('refuses a 1 MB string without normalising it', () => {
    const normalize = jest.spyOn(String.prototype, 'normalize')
    expect(normalizePassword('a'.repeat(1_000_000), 256)).toBeNull()
    expect(normalize).not.toHaveBeenCalled()
  })

  it('normalises up to maxLength * 4 UTF-16 code units and refuses one more, unnormalised', () => {
    const normalize = jest.spyOn(String.prototype, 'normalize')
    expect(normalizePassword('a'.repeat(1024), 256)).toBe('a'.repeat(1024))
    expect(normalize).toHaveBeenCalledTimes(1)
    expect(normalizePassword('a'.repeat(1025), 256)).toBeNull()
    expect(normalize).toHaveBeenCalledTimes(1)
  })
})

describe('checkPassword', () => {
  it('accepts exactly minLength characters and refuses one fewer', async () => {
    expect(await checkPassword('q7#Lm2vZ', DEFAULT_PASSWORD_POLICY)).toBeUndefined()
    expect(await checkPassword('q7#Lm2v', DEFAULT_PASSWORD_POLICY)).toBe('too_short')
    expect(await checkPassword('', DEFAULT_PASSWORD_POLICY)).toBe('too_short')
  })

  it('accepts exactly maxLength characters and refuses one more', async () => {
    const long = randomPassword(256)
    expect(await checkPassword(long, DEFAULT_PASSWORD_POLICY)).toBeUndefined()
    expect(await checkPassword(`${long}x`, DEFAULT_PASSWORD_POLICY)).toBe('too_long')
  })

  it('counts Unicode code points, not UTF-16 units: four emoji are four characters', async () => {
    const dragons = '🐉🐉🐉🐉'
    expect(dragons).toHaveLength(8)
    expect(await checkPassword(dragons, DEFAULT_PASSWORD_POLICY)).toBe('too_short')
    expect(await checkPassword(dragons, { minLength: 4, maxLength: 4 })).toBeUndefined()
    expect(await checkPassword(`${dragons}🐉`, { minLength: 4, maxLength: 4 })).toBe('too_long')
  })

  it.each(['password', 'Password1', '12345678', 'PASSWORD', 'qwertyuiop', 'iloveyou1', 'pa$$w0rd'])('refuses %s as common, whatever its case', async (password) => {
    expect(await checkPassword(password, DEFAULT_PASSWORD_POLICY)).toBe('common')
  })

  it('accepts a random 20-character password', async () => {
    expect(await checkPassword(randomPassword(20), DEFAULT_PASSWORD_POLICY)).toBeUndefined()
  })

  it('imposes no composition rules: lower-case letters and spaces only are fine', async () => {
    expect(await checkPassword('correct horse battery staple', DEFAULT_PASSWORD_POLICY)).toBeUndefined()
  })

  it('asks isBreached about the password and refuses it as breached when it says so', async () => {
    const password = randomPassword(20)
    const isBreached = jest.fn((_password: string) => true)
    expect(await checkPassword(password, { ...DEFAULT_PASSWORD_POLICY, isBreached })).toBe('breached')
    expect(isBreached).toHaveBeenCalledTimes(1)
    expect(isBreached).toHaveBeenCalledWith(password)
  })

  it('accepts the password when isBreached says no, and awaits an async answer', async () => {
    const password = randomPassword(20)
    expect(await checkPassword(password, { ...DEFAULT_PASSWORD_POLICY, isBreached: () => false })).toBeUndefined()
    expect(await checkPassword(password, { ...DEFAULT_PASSWORD_POLICY, isBreached: async () => true })).toBe('breached')
    expect(await checkPassword(password, { ...DEFAULT_PASSWORD_POLICY, isBreached: async () => false })).toBeUndefined()
  })

  it('does not call isBreached for a password already refused (too short, too long or common)', async () => {
    const isBreached = jest.fn(() => true)
    const policy: PasswordPolicy = { ...DEFAULT_PASSWORD_POLICY, isBreached }
    expect(await checkPassword('short', policy)).toBe('too_short')
    expect(await checkPassword(randomPassword(257), policy)).toBe('too_long')
    expect(await checkPassword('Password1', policy)).toBe('common')
    expect(isBreached).not.toHaveBeenCalled()
  })
})

describe('the common-password list', () => {
  const file = readFileSync(new URL('../../src/features/password/common-passwords.txt', import.meta.url), 'utf8')
  const list = file.split('\n').slice(0, -1)

  it('holds at least 10,000 distinct lower-case passwords of 8 characters or more, one a line, LF-ended', () => {
    expect(file.endsWith('\n')).toBe(true)
    expect(file).not.toContain('\r')
    expect(list.length).toBeGreaterThanOrEqual(10_000)
    expect(new Set(list).size).toBe(list.length)
    expect(list.filter((password) => password.length < 8 || password !== password.toLowerCase() || password.trim() !== password)).toEqual([])
  })

  it('starts with the most common ones', () => {
    expect(list.slice(0, 3)).toEqual(['password', '12345678', '123456789'])
  })

  it('is read into a set of exactly the lines of the file, with no empty entry for its last line end', async () => {
    const set = await readCommonPasswords()
    expect([...set]).toEqual(list)
    expect(set.has('')).toBe(false)
  })

  it('reads a list whose line ends a checkout turned into CRLF as the same passwords', () => {
    expect([...commonPasswordSet('password\r\n12345678\r\n')]).toEqual(['password', '12345678'])
    expect([...commonPasswordSet('password\n12345678')]).toEqual(['password', '12345678'])
  })

  it('is loaded on the first check, not when the policy module is imported', async () => {
    await jest.isolateModulesAsync(async () => {
      const read = jest.fn(async () => new Set(['letmein1', 'sunshine']))
      const load = jest.fn(() => ({ readCommonPasswords: read }))
      jest.unstable_mockModule('../../src/features/password/common-passwords.js', load)
      const policy = await import('../../src/features/password/policy.js')
      // Let an import started while the module was evaluated run its course before looking.
      for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve))
      expect(load).not.toHaveBeenCalled()
      expect(policy.normalizePassword('LetMeIn1', 256)).toBe('LetMeIn1')
      expect(await policy.checkPassword('short', policy.DEFAULT_PASSWORD_POLICY)).toBe('too_short')
      expect(load).not.toHaveBeenCalled()
      const [first, second] = await Promise.all([
        policy.checkPassword('LetMeIn1', policy.DEFAULT_PASSWORD_POLICY),
        policy.checkPassword('sunshine', policy.DEFAULT_PASSWORD_POLICY),
      ])
      expect([first, second]).toEqual(['common', 'common'])
      expect(await policy.checkPassword('password', policy.DEFAULT_PASSWORD_POLICY)).toBeUndefined()
      expect(load).toHaveBeenCalledTimes(1)
      expect(read).toHaveBeenCalledTimes(1)
    })
  })

  it('reads the list again on the next check when a read failed, instead of keeping the failure', async () => {
    await jest.isolateModulesAsync(async () => {
      const read = jest.fn<() => Promise<ReadonlySet<string>>>().mockRejectedValueOnce(new Error('EMFILE: too many open files')).mockResolvedValue(new Set(['letmein1']))
      jest.unstable_mockModule('../../src/features/password/common-passwords.js', () => ({ readCommonPasswords: read }))
      const policy = await import('../../src/features/password/policy.js')
      await expect(policy.checkPassword('LetMeIn1', policy.DEFAULT_PASSWORD_POLICY)).rejects.toThrow('EMFILE')
      expect(await policy.checkPassword('LetMeIn1', policy.DEFAULT_PASSWORD_POLICY)).toBe('common')
      expect(await policy.checkPassword('sunshine', policy.DEFAULT_PASSWORD_POLICY)).toBeUndefined()
      expect(read).toHaveBeenCalledTimes(2)
    })
  })
})

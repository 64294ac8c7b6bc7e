/**
 * What the second factor stores, pinned: a later version must open the TOTP keys and match the
 * recovery codes that this one wrote to users' databases, and produce the codes their authenticator
 * apps show. The sealed key and the hash below were written by this version and are kept as they
 * are; a change of format that cannot read them fails here before it reaches a user.
 */
import { describe, expect, it } from '@jest/globals'
import { createHmac, hkdfSync } from 'node:crypto'
import { compactDecrypt, decodeProtectedHeader } from 'jose'
import { normalizeRecoveryCode, recoveryCodeHash, recoveryKeyOf } from '../../src/features/two-factor/recovery.js'
import { matchingStep, openTotpSecret, sealTotpSecret, sealedWithCurrentSecret, stepAt, totpCode, totpUri } from '../../src/features/two-factor/totp.js'

const SECRET = 'two-factor-fixture-secret-0123456789abcdefghij'
const KEY = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
/** `KEY` as `sealTotpSecret([SECRET], KEY)` wrote it (2026-11-28). */
const SEALED_KEY =
  'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIiwia2lkIjoiSFJYa1E4WGpqZ0VaQTloVDI3OEkteGp2UlViajM2WXcyek1rM2dIUVZzV1hYSE5PWXRlX0FnYmFpY1dMWktEeVg1UENiTXhOTUFmOUowVVAwazV3VlEifQ' +
  '..oCTDh0fCwusI36QrHe-7aA.B0IqKgYJHLm98djIPOCSVZrkN4kUyoGX4QEy8rAzMn7htCstV_WpOJQd5nkbPP18.AxeT4103pAIjJXFJ_Zj8ZMhzcFDrSexVKRQ8_SHEwHk'
/** The recovery code `abcde-23456` of user `user-1` as stored under `SECRET` (2026-11-28: sets keyed with the secret itself). */
const RECOVERY_HASH = '9a3ccda5216cb6ef8236cad243574b72d3da2c98a2fc629f8df7f1405b69a667'
/** The same code of the same user in a set keyed from the TOTP key `KEY` (2026-12-01: sets since). */
const KEYED_RECOVERY_HASH = '42a57226c4fe2e726900a40fc1c787734b9912c2f64d4d516a4306b90377ae71'

describe('the TOTP codes are RFC 6238\'s (HMAC-SHA-1, 30-second steps, the last six digits)', () => {
  // RFC 6238 Appendix B, SHA-1 rows: the key is the ASCII "12345678901234567890".
  const rfcKey = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
  const vectors: Array<[seconds: number, eightDigits: string]> = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ]

  it.each(vectors)('at %i s the code is the last six digits of %s, and it matches the step floor(T / 30)', (seconds, eightDigits) => {
    const code = eightDigits.slice(2)
    expect(totpCode(rfcKey, seconds * 1000)).toBe(code)
    expect(matchingStep(rfcKey, code, seconds * 1000)).toBe(Math.floor(seconds / 30))
    expect(stepAt(seconds * 1000)).toBe(Math.floor(seconds / 30))
  })

  it('takes a code of the step before or after (one step of drift) and no further', () => {
    const t = 1234567890 * 1000
    expect(matchingStep(rfcKey, '005924', t + 30_000)).toBe(stepAt(t))
    expect(matchingStep(rfcKey, '005924', t - 30_000)).toBe(stepAt(t))
    expect(matchingStep(rfcKey, '005924', t + 60_000)).toBeNull()
    expect(matchingStep(rfcKey, '005924', t - 60_000)).toBeNull()
  })

  it('writes the URI authenticator apps read, with the parameters spelled out', () => {
    expect(totpUri(KEY, 'Example Co', 'ada@example.com')).toBe(
      'otpauth://totp/Example%20Co:ada%40example.com?issuer=Example%20Co&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30',
    )
  })
})

describe('a TOTP key sealed by this version', () => {
  it('opens with its secret, also listed after a newer one, and with no other', () => {
    expect(openTotpSecret([SECRET], SEALED_KEY)).toBe(KEY)
    expect(openTotpSecret(['a-newer-secret-0123456789abcdefghijklmnop', SECRET], SEALED_KEY)).toBe(KEY)
    expect(openTotpSecret(['a-newer-secret-0123456789abcdefghijklmnop'], SEALED_KEY)).toBeNull()
  })

  it('is a direct A256CBC-HS512 JWE under the key HKDF derives from the secret with the salt portcullis.totp-secret', async () => {
    // Derived here as RFC 5869 and Auth.js's key rule say, not with Portcullis's code.
    const salt = 'portcullis.totp-secret'
    const key = new Uint8Array(hkdfSync('sha256', SECRET, salt, `Auth.js Generated Encryption Key (${salt})`, 64))
    expect(decodeProtectedHeader(SEALED_KEY)).toMatchObject({ alg: 'dir', enc: 'A256CBC-HS512' })
    const { plaintext } = await compactDecrypt(SEALED_KEY, key)
    expect(new TextDecoder().decode(plaintext)).toBe(KEY)
  })

  it('is what sealing writes now (the same format, with a fresh IV each time)', async () => {
    const sealed = sealTotpSecret([SECRET], KEY)
    expect(sealed).not.toBe(SEALED_KEY)
    expect(decodeProtectedHeader(sealed)).toEqual(decodeProtectedHeader(SEALED_KEY))
    expect(openTotpSecret([SECRET], sealed)).toBe(KEY)
  })

  it('is told apart, by its header, from a key sealed with a newer secret (what is sealed again on its next use)', () => {
    const newer = 'a-newer-secret-0123456789abcdefghijklmnop'
    expect(sealedWithCurrentSecret([SECRET], SEALED_KEY)).toBe(true)
    expect(sealedWithCurrentSecret([newer, SECRET], SEALED_KEY)).toBe(false)
    const resealed = sealTotpSecret([newer, SECRET], KEY)
    expect(sealedWithCurrentSecret([newer, SECRET], resealed)).toBe(true)
    expect(sealedWithCurrentSecret([newer], resealed)).toBe(true)
    expect(decodeProtectedHeader(resealed).kid).not.toBe(decodeProtectedHeader(SEALED_KEY).kid)
    expect(openTotpSecret([newer], resealed)).toBe(KEY)
  })
})

describe('a recovery code stored by this version', () => {
  it('is HMAC-SHA-256 keyed with the secret over a label, the user id and the code in its stored form', () => {
    const stored = normalizeRecoveryCode(' ABCDE-23456 ')
    expect(stored).toBe('abcde23456')
    expect(recoveryCodeHash(SECRET, 'user-1', stored!)).toBe(RECOVERY_HASH)
    expect(createHmac('sha256', SECRET).update('portcullis.recovery-code\0user-1\0abcde23456').digest('hex')).toBe(RECOVERY_HASH)
    // Bound to the user: the same code of another user is another hash.
    expect(recoveryCodeHash(SECRET, 'user-2', stored!)).not.toBe(RECOVERY_HASH)
  })

  it('is, since 2026-12, HMAC-SHA-256 keyed with a key HMAC-SHA-256 derives from the TOTP key, over the same message', () => {
    const key = recoveryKeyOf(KEY)
    expect(key).toEqual(createHmac('sha256', KEY).update('portcullis.recovery-code-key').digest())
    expect(recoveryCodeHash(key, 'user-1', 'abcde23456')).toBe(KEYED_RECOVERY_HASH)
    expect(createHmac('sha256', key).update('portcullis.recovery-code\0user-1\0abcde23456').digest('hex')).toBe(KEYED_RECOVERY_HASH)
    // Bound to the enrolment's key and to the user, and no longer to the secret.
    expect(recoveryCodeHash(recoveryKeyOf('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'), 'user-1', 'abcde23456')).not.toBe(KEYED_RECOVERY_HASH)
    expect(recoveryCodeHash(key, 'user-2', 'abcde23456')).not.toBe(KEYED_RECOVERY_HASH)
  })
})

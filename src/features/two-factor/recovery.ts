/**
 * Recovery codes: ten per enrolment, each ten characters of a 31-symbol alphabet (49 bits) shown as
 * `xxxxx-xxxxx`, single use. Stored as HMAC-SHA-256 over the user id and the code, keyed with a key
 * derived from the enrolment's TOTP key, which is stored sealed with the secret (`AUTH_SECRET`): a
 * database dump alone cannot be searched offline, and online guessing is held by the per-account
 * rate limit. Keyed so, the set follows its TOTP key when that is sealed again with a newer secret
 * (rotation), and needs no old secret afterwards; a HMAC keyed with the secret itself could never
 * be moved to another secret without the codes in the clear.
 *
 * Sets issued before that (until 2026-12) were keyed with the secret itself: they are still
 * checked with each configured secret, and move to their TOTP key when the user asks for new codes.
 */
import { createHmac, randomInt } from 'node:crypto'

/** Codes per enrolment. */
export const RECOVERY_CODE_COUNT = 10
// No 0/o, 1/l/i: read off paper without doubt.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
const LENGTH = 10

/** Ten new codes, as the user sees them. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = ''
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)]
    return `${code.slice(0, 5)}-${code.slice(5)}`
  })
}

/** A typed code in the stored form (lower case, without spaces or dashes); undefined when it cannot be one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.toLowerCase().replace(/[\s-]/g, '')
  return code.length === LENGTH && [...code].every((char) => ALPHABET.includes(char)) ? code : undefined
}

/** The key a set's hashes are keyed with: HMAC-SHA-256 keyed with the enrolment's TOTP key (base32) over a label. */
export function recoveryKeyOf(totpSecret: string): Buffer {
  return createHmac('sha256', totpSecret).update('portcullis.recovery-code-key').digest()
}

/** The stored hashes of new `codes` (as `newRecoveryCodes` shows them) for `userId`, keyed with `key` (`recoveryKeyOf`). */
export function recoveryCodeHashes(key: string | Buffer, userId: string, codes: readonly string[]): string[] {
  return codes.map((code) => recoveryCodeHash(key, userId, normalizeRecoveryCode(code)!))
}

/** The stored hash of `code` (normalised) for `userId`, keyed with `key` (`recoveryKeyOf`, or a secret for the sets issued before it). */
export function recoveryCodeHash(key: string | Buffer, userId: string, code: string): string {
  return createHmac('sha256', key).update(`portcullis.recovery-code\0${userId}\0${code}`).digest('hex')
}

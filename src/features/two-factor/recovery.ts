/**
 * Recovery codes: ten per enrolment, each ten characters of a 31-symbol alphabet (49 bits) shown as
 * `xxxxx-xxxxx`, single use. Stored as HMAC-SHA-256 keyed with the secret (`AUTH_SECRET`) over the
 * user id and the code, so a database dump alone cannot be searched offline; online guessing is held
 * by the per-account rate limit. A code is checked with each configured secret, so rotating it keeps
 * the codes good while the old secret stays in the list.
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

/** The stored hashes of new `codes` (as `newRecoveryCodes` shows them) for `userId`, keyed with `secret`. */
export function recoveryCodeHashes(secret: string, userId: string, codes: readonly string[]): string[] {
  return codes.map((code) => recoveryCodeHash(secret, userId, normalizeRecoveryCode(code)!))
}

/** The stored hash of `code` (normalised) for `userId`, keyed with `secret`. */
export function recoveryCodeHash(secret: string, userId: string, code: string): string {
  return createHmac('sha256', secret).update(`portcullis.recovery-code\0${userId}\0${code}`).digest('hex')
}

/**
 * What a new password must be, after NIST SP 800-63B: a minimum length, a generous maximum, not a
 * commonly used or breached password, and no composition rules (no "one digit, one symbol").
 * Length is counted in Unicode code points, after NFKC normalisation, which is also the form hashed.
 *
 * The list of common passwords (about 170 kB) is loaded on the first check only: signing up or
 * changing a password needs it, reading a session never does.
 */

/**
 * The rules a new password (sign-up, reset, change) must meet.
 *
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html (SP 800-63B-4 §3.1.1.2, password verifiers)
 */
export interface PasswordPolicy {
  /** The fewest characters (code points) accepted. NIST: at least 8; 15 when the password is the only factor. */
  readonly minLength: number
  /** The most characters (code points) accepted. NIST: allow at least 64. */
  readonly maxLength: number
  /**
   * Whether the password is known from a breach (for example a k-anonymity query to Have I Been
   * Pwned's Pwned Passwords range API). Called last, only for a password that passed every other
   * rule. `true` refuses the password as `breached`; an error it throws is the caller's to handle.
   */
  readonly isBreached?: ((password: string) => boolean | Promise<boolean>) | undefined
}

/**
 * The default policy: 8 to 256 characters, not a common password, no breach check.
 *
 * 8 is NIST's floor for any password; SP 800-63B-4 asks for 15 when the password alone signs the
 * user in (no second factor), so raise `minLength` there. 256 is well above NIST's 64 and leaves room
 * for passphrases, while keeping the work of normalising and hashing one small.
 */
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = Object.freeze({ minLength: 8, maxLength: 256 })

/**
 * Why a password was refused: shorter than `minLength`, longer than `maxLength`, on the list of
 * common passwords, or reported by `isBreached`.
 */
export type PasswordProblem = 'too_short' | 'too_long' | 'common' | 'breached'

/**
 * The password as it is checked and hashed: its NFKC normalisation (Unicode UAX #15), so that the
 * same password typed as different code points (a precomposed `é` or `e` + U+0301, full-width or
 * ASCII digits, the `ﬁ` ligature or `fi`) is one password.
 *
 * Returns null for a non-string, and for a string longer than `maxLength * 4` UTF-16 code units,
 * checked before normalising: a one-megabyte body never reaches NFKC or the hash. (Four units per
 * character leave room for surrogate pairs and for decomposed input that NFKC composes.) A result
 * may still be longer than `maxLength`: `checkPassword` says so.
 *
 * @param value The submitted field, as parsed from the request body.
 * @param maxLength The policy's `maxLength`.
 * @example
 * normalizePassword('ｐａｓｓ１２３４', 256) // 'pass1234'
 * normalizePassword(['an', 'array'], 256) // null
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html (SP 800-63B-4 §3.1.1.2: normalise Unicode before hashing)
 * @see https://www.unicode.org/reports/tr15/
 */
export function normalizePassword(value: unknown, maxLength: number): string | null {
  if (typeof value !== 'string' || value.length > maxLength * 4) return null
  return value.normalize('NFKC')
}

/**
 * The first rule of `policy` that `password` breaks, or undefined when it meets them all: its length
 * in Unicode code points (each counts as one, as NIST asks: four emoji are four characters), then the
 * list of common passwords (case-insensitive), then `policy.isBreached`. No composition rules.
 *
 * @param password The password as `normalizePassword` returned it.
 * @param policy The rules, e.g. `DEFAULT_PASSWORD_POLICY`.
 * @example
 * await checkPassword('Password1', DEFAULT_PASSWORD_POLICY) // 'common'
 * await checkPassword('correct horse battery staple', DEFAULT_PASSWORD_POLICY) // undefined
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html (SP 800-63B-4 §3.1.1.2)
 */
export async function checkPassword(password: string, policy: PasswordPolicy): Promise<PasswordProblem | undefined> {
  if (typeof password !== 'string') throw new TypeError(`checkPassword: the password must be a string (normalizePassword's result); got ${typeof password}`)
  const length = codePoints(password, Math.max(policy.minLength, policy.maxLength) + 1)
  if (length < policy.minLength) return 'too_short'
  if (length > policy.maxLength) return 'too_long'
  if ((await commonPasswords()).has(password.toLowerCase())) return 'common'
  if (policy.isBreached !== undefined && (await policy.isBreached(password))) return 'breached'
  return undefined
}

/** How many code points `text` has, counting no further than `limit`. */
function codePoints(text: string, limit: number): number {
  let count = 0
  for (const _ of text) if (++count >= limit) break
  return count
}

let common: Promise<ReadonlySet<string>> | undefined

/** The common passwords, read on the first call (one read, however many checks wait on it; a failed read is tried again). */
function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('./common-passwords.js')
    .then(({ readCommonPasswords }) => readCommonPasswords())
    .catch((error: unknown) => {
      common = undefined
      throw error
    })
  return common
}

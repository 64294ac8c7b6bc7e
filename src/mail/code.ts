/**
 * A mailed code's life in the verification-token table, through the adapter's
 * `createVerificationToken` and `useVerificationToken` (no table of its own). Shared by the sign-in
 * codes (features/email-code), the password sign-up's verification code (features/password) and the
 * change of address's code (features/account), each under a `purpose` of its own, so that a code
 * of one is never found as another's (the purpose is in every HMAC):
 *
 * - The browser that asks holds a random nonce (256 bits) in its binding cookie; the database holds
 *   only HMACs of it, keyed by the secret, so neither a database dump nor the code alone is enough.
 * - One row holds the code: its token is HMAC(secret, nonce, address, code). Only the right code in
 *   the right browser, for the address it was mailed to, finds it; using it deletes it (single use).
 * - Five more rows are the tries: each check first takes one (`useVerificationToken` deletes it
 *   atomically: of concurrent takers exactly one gets it), then looks the code up. Five wrong tries
 *   take all five, and every later check, the right code too, finds no try and is refused. This is
 *   race-free across requests and processes without a counter column: a try is a row, taken once.
 *
 * The code is compared by looking up its HMAC (a timing difference in the database's comparison
 * tells nothing about a code whose hash is keyed by the secret), then in constant time against the
 * row found (an adapter whose lookup ignores case must not widen the match).
 */
import { createHmac, randomBytes, randomInt } from 'node:crypto'
import { sameTokenHash } from './token.js'
import type { Adapter } from '../types.js'

/** Wrong tries before a code is void. */
export const MAX_TRIES = 5
/** Digits of a code. */
export const CODE_DIGITS = 6
/** What the binding cookie's value starts with (the cookie is shared with the links', whose values are HMACs). */
const COOKIE_PREFIX = 'code.'

export type CodeAdapter = Required<Pick<Adapter, 'createVerificationToken' | 'useVerificationToken'>>

/** What checking a code found. */
export type CodeCheck =
  | { readonly outcome: 'right' }
  | { readonly outcome: 'wrong'; readonly triesLeft: number }
  /** The last try was wrong: the code is void. */
  | { readonly outcome: 'void' }
  | { readonly outcome: 'expired' }
  /** No try left, never issued, used, or asked for in another browser. */
  | { readonly outcome: 'unknown' }

/**
 * What a code is for: its rows' identifiers and every HMAC name it. `email-code` is the sign-in
 * code's (the name its rows have had since the start).
 */
export type CodePurpose = 'email-code' | 'sign-up-code' | 'email-change-code'

const hmac = (secret: string, ...parts: string[]) => createHmac('sha256', secret).update(parts.join('\0')).digest('hex')
const rowIdentifier = (purpose: CodePurpose, secret: string, nonce: string) => `${purpose}:${hmac(secret, `portcullis ${purpose} row`, nonce)}`
const tryToken = (purpose: CodePurpose, secret: string, nonce: string, index: number) => hmac(secret, `portcullis ${purpose} try`, nonce, String(index))
const codeToken = (purpose: CodePurpose, secret: string, nonce: string, address: string, code: string) => hmac(secret, `portcullis ${purpose}`, nonce, address, code)

/** A new code: `CODE_DIGITS` digits from the CSPRNG, uniformly (randomInt rejects the modulo bias). */
export function newCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0')
}

/** The binding cookie's value for `nonce`, and the nonce of a cookie (undefined for none, or a link's). */
export function bindingCookie(nonce: string): string {
  return `${COOKIE_PREFIX}${nonce}`
}
export function nonceOf(cookie: string | undefined): string | undefined {
  const nonce = cookie?.startsWith(COOKIE_PREFIX) ? cookie.slice(COOKIE_PREFIX.length) : undefined
  return nonce && /^[\w-]{43}$/.test(nonce) ? nonce : undefined
}

/**
 * Stores a new code for `address` (what the code proves: an address, or a user and an address), bound
 * to a new nonce (hashed with the first secret).
 * @returns The nonce for the binding cookie, and the rows written (to discard them if the mail fails).
 */
export async function storeCode(
  adapter: CodeAdapter,
  secret: string,
  address: string,
  code: string,
  expires: Date,
  purpose: CodePurpose = 'email-code',
): Promise<{ nonce: string; discard: () => Promise<void> }> {
  const nonce = randomBytes(32).toString('base64url')
  const identifier = rowIdentifier(purpose, secret, nonce)
  const rows = [codeToken(purpose, secret, nonce, address, code), ...Array.from({ length: MAX_TRIES }, (_, index) => tryToken(purpose, secret, nonce, index))].map((token) => ({ identifier, token, expires }))
  await Promise.all(rows.map((row) => adapter.createVerificationToken(row)))
  return { nonce, discard: async () => void (await Promise.all(rows.map((row) => adapter.useVerificationToken(row)))) }
}

/**
 * Checks `code` for `address` in the browser holding `nonce`, using one try.
 * @param secrets The configured secrets, newest first (a code mailed before a rotation still works).
 */
export async function checkCode(
  adapter: CodeAdapter,
  secrets: readonly string[],
  nonce: string,
  address: string,
  code: string,
  now = Date.now(),
  purpose: CodePurpose = 'email-code',
): Promise<CodeCheck> {
  const taken = await takeTry(adapter, purpose, secrets, nonce)
  if (!taken) return { outcome: 'unknown' }
  const { secret, identifier, index } = taken
  if (taken.expires.getTime() < now) return { outcome: 'expired' }
  const token = codeToken(purpose, secret, nonce, address, code)
  const row = await adapter.useVerificationToken({ identifier, token })
  if (row && sameTokenHash(row.token, token) && row.identifier === identifier) {
    // The tries left are no use any more; they would expire anyway.
    await Promise.all(Array.from({ length: MAX_TRIES - 1 - index }, (_, offset) => adapter.useVerificationToken({ identifier, token: tryToken(purpose, secret, nonce, index + 1 + offset) })))
    return row.expires.getTime() < now ? { outcome: 'expired' } : { outcome: 'right' }
  }
  const triesLeft = MAX_TRIES - 1 - index
  return triesLeft > 0 ? { outcome: 'wrong', triesLeft } : { outcome: 'void' }
}

/** Takes the first try left of the code bound to `nonce` (deleting its row), under whichever secret stored it. */
async function takeTry(adapter: CodeAdapter, purpose: CodePurpose, secrets: readonly string[], nonce: string): Promise<{ secret: string; identifier: string; index: number; expires: Date } | undefined> {
  for (const secret of secrets) {
    const identifier = rowIdentifier(purpose, secret, nonce)
    for (let index = 0; index < MAX_TRIES; index += 1) {
      const row = await adapter.useVerificationToken({ identifier, token: tryToken(purpose, secret, nonce, index) })
      if (row) return { secret, identifier, index, expires: row.expires }
    }
  }
  return undefined
}
